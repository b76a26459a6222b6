import type { Page, Route } from 'playwright-core';
import type { TestStack } from '../harness/stack';
import type { WebhookReceiver } from '../harness/webhookReceiver';

/** What the console's browser checks share: one page, one stack and receiver (started once by the test file). */
export interface ConsoleContext {
  page: Page;
  stack: TestStack;
  receiver: WebhookReceiver;
  /** A screenshot and an accessibility check of the page as it is now. */
  checkpoint(name: string): Promise<void>;
  /** Signs in as `account` and opens `hash`. */
  openAs(account: string, hash: string): Promise<void>;
}

/** A getter: the context is filled in by beforeAll, after the tests are declared. */
export type Context = () => ConsoleContext;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A new instance of `account`, as its id. */
export const createInstance = async (stack: TestStack, account: string): Promise<string> => {
  const created = await stack.call('/v1/create_instance', { account });
  expect(created.status).toBe(200);
  return String(created.body.instance_id);
};

/**
 * Links the instance open in the console by a simulated scan of the code it shows. A code whose connection ended
 * (a loaded machine) answers no_qr_waiting: the console fetches a fresh one, scanned again (bounded).
 */
export const scanShownCode = async ({ page, stack }: ConsoleContext, account: string, id: string): Promise<void> => {
  await page.locator('img.qr').waitFor();
  for (let attempt = 0; attempt < 5; attempt++) {
    const scan = await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=4915100000042`, { account });
    if (scan.status === 200) break;
    await sleep(1_000);
  }
  await page.locator('dd[data-state="connected"]').waitFor({ timeout: 15_000 });
};

/** Every delivery of an instance, read page by page from the API. */
export const allDeliveryIds = async (stack: TestStack, account: string, id: string): Promise<string[]> => {
  const ids: string[] = [];
  let cursor = '';
  for (let page = 0; page < 100; page++) {
    const read = await stack.call(`/v1/webhook_deliveries?instance_id=${id}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { account });
    expect(read.status).toBe(200);
    ids.push(...(read.body.deliveries as Array<{ delivery_id: string }>).map((d) => d.delivery_id));
    if (typeof read.body.next_cursor !== 'string') break;
    cursor = read.body.next_cursor;
  }
  return ids;
};

/**
 * Waits until `expression` (evaluated in the page) is true. Polled from here: the console's CSP (no unsafe-eval)
 * refuses Playwright's waitForFunction with a string.
 */
export const waitUntil = async (page: Page, expression: string, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean>(`Boolean(${expression})`))) {
    if (Date.now() > deadline) throw new Error(`still false after ${timeoutMs} ms: ${expression}`);
    await sleep(100);
  }
};

/** Answers a /v1 call with this status, JSON body and headers. */
export const answer =
  (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  (route: Route): Promise<void> =>
    route.fulfill({ status, contentType: 'application/json', headers, body: JSON.stringify(body) });

/**
 * Waits for `selector` to show; on a time-out the error says what the page showed instead (its address and its
 * notices: a refusal, "Checking the token…"), so a wait that failed on a loaded CI machine can be told apart.
 */
export const shown = async (page: Page, selector: string, timeoutMs = 12_000): Promise<void> => {
  try {
    await page.locator(selector).first().waitFor({ timeout: timeoutMs });
  } catch (error) {
    const notices = await page
      .locator('.notice')
      .allTextContents()
      .catch(() => []);
    throw new Error(`${selector} not shown within ${timeoutMs} ms at ${page.url()}; notices: ${JSON.stringify(notices)} (${String(error)})`);
  }
};
