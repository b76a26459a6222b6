import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { startStack, type TestStack } from '../harness/stack';
import { describeInChromium, launchChromium } from './chromium';
import { sleep, waitUntil } from './consoleContext';

// README "Browsers of other origins (CORS)": a page served from another origin than the gateway's calls the API from
// real Chromium, which makes the preflight and enforces the answer's headers, as a team's dashboard would.

/** A page of its own origin (http://<host>:<port>): an empty document whose scripts the test runs. */
const startPageServer = async (): Promise<{ server: Server; port: number }> => {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>dashboard</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
};

interface PageAnswer {
  status: number;
  body: Record<string, unknown>;
  remaining: string | null;
}

/**
 * A call with a bearer token from the page (so a preflight first), a POST with a JSON body when `body` is given, as
 * its answer or the fetch's error.
 */
const callFromPage = (page: Page, url: string, token: string, body?: object): Promise<PageAnswer | string> =>
  page.evaluate(
    async ({ url, token, body }) => {
      try {
        const response = await fetch(
          url,
          body
            ? {
                method: 'POST',
                headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'cors-1' },
                body: JSON.stringify(body),
              }
            : { headers: { authorization: `Bearer ${token}` } },
        );
        return { status: response.status, body: (await response.json()) as Record<string, unknown>, remaining: response.headers.get('ratelimit-remaining') };
      } catch (error) {
        return String(error);
      }
    },
    { url, token, body },
  );

describeInChromium('CORS in Chromium', () => {
  let stack: TestStack;
  let pages: Server;
  let port: number;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ server: pages, port } = await startPageServer());
    // Listed as the browser sends it: 127.0.0.1 is allowed, localhost (the same server) is another origin.
    stack = await startStack({}, true, {}, { gateway: { corsOrigins: [`http://127.0.0.1:${port}`] } });
    browser = await launchChromium();
    page = await browser.newPage();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    pages?.close();
  });

  it('lets a page of an allowed origin create an instance and send through it, and read the rate-limit headers', async () => {
    await page.goto(`http://127.0.0.1:${port}/`);
    const token = stack.token('dashboard');
    const created = await callFromPage(page, `${stack.baseUrl}/v1/create_instance`, token);
    expect(created).toMatchObject({ status: 200, body: { instance_id: expect.stringMatching(/^[0-9A-F]{20}$/) as string } });
    const id = String((created as PageAnswer).body.instance_id);
    expect(Number((created as PageAnswer).remaining)).toBeGreaterThan(0);
    // Linked by the sandbox's scan (from the test, not the page), then a send from the page.
    await stack.call(`/v1/get_qrcode?instance_id=${id}`, { account: 'dashboard' });
    expect((await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=4915100000077`, { account: 'dashboard' })).status).toBe(200);
    const sent = await callFromPage(page, `${stack.baseUrl}/v1/send`, token, {
      instance_id: id,
      number: '4915112345678',
      type: 'text',
      message: 'from a page',
    });
    expect(sent).toMatchObject({ status: 200, body: { message_id: expect.stringMatching(/^m_/) as string } });
    // An error reaches the page too, as the API's JSON.
    const refused = await callFromPage(page, `${stack.baseUrl}/v1/send`, token, { instance_id: id, number: '12', type: 'text', message: 'x' });
    expect(refused).toMatchObject({ status: 400, body: { code: 'invalid_number' } });
  }, 30_000);

  it('lets a page of an allowed origin follow the live events with an EventSource (the token in the query, as EventSource sends no header)', async () => {
    await page.goto(`http://127.0.0.1:${port}/`);
    const token = stack.token('live');
    const id = String((await stack.call('/v1/create_instance', { account: 'live' })).body.instance_id);
    await stack.call(`/v1/get_qrcode?instance_id=${id}`, { account: 'live' });
    expect((await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=4915100000078`, { account: 'live' })).status).toBe(200);
    await page.evaluate(
      ({ url }) => {
        const events = new EventSource(url);
        const seen: unknown[] = [];
        Object.assign(globalThis, { seen, events });
        events.addEventListener('message.received', (event) => seen.push(JSON.parse((event as unknown as { data: string }).data)));
        events.addEventListener('error', () => seen.push('error'));
      },
      { url: `${stack.baseUrl}/v1/events?instance_id=${id}&types=message.received&access_token=${token}` },
    );
    // Once the stream is open (the answer's CORS headers let the page have it), an inbound message reaches the page.
    await waitUntil(page, 'globalThis.events.readyState === EventSource.OPEN');
    expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4917612345678&text=live`, { account: 'live' })).status).toBe(200);
    let seen: unknown[] = [];
    for (let i = 0; i < 50 && seen.length === 0; i++) {
      await sleep(200);
      seen = await page.evaluate(() => (globalThis as unknown as { seen: unknown[] }).seen);
    }
    expect(seen).toMatchObject([{ type: 'message.received', instance_id: id }]);
  }, 30_000);

  it('keeps a page of another origin from reading anything: the browser refuses the call', async () => {
    await page.goto(`http://localhost:${port}/`);
    const answer = await callFromPage(page, `${stack.baseUrl}/v1/create_instance`, stack.token('elsewhere'));
    expect(answer).toBe('TypeError: Failed to fetch');
    // Refused at the preflight: nothing was created.
    expect((await stack.call('/v1/list_instances', { account: 'elsewhere' })).body.instances).toEqual([]);
  });
});
