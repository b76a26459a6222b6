import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startStack, type TestStack } from '../harness/stack';
import { WebhookReceiver } from '../harness/webhookReceiver';
import { describeInChromium, launchChromium, seriousViolations } from './chromium';
import type { ConsoleContext } from './consoleContext';
import { listLiveChecks } from './consoleListLive';
import { sendingChecks } from './consoleSending';
import { signInChecks } from './consoleSignIn';
import { stateChecks } from './consoleStates';
import { webhookChecks } from './consoleWebhook';

// The console in real Chromium: the whole path a person takes, from sign-in to a redelivered webhook, at 375 px.

const SHOTS = resolve(process.env.CONSOLE_SCREENSHOTS_DIR ?? join(__dirname, '../../test-results/console-screenshots'));
const XSS = '<img src=x onerror=alert(1)>';

describeInChromium('console in Chromium', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const alerts: string[] = [];
  const pageErrors: string[] = [];

  /** A screenshot and an accessibility check of the page as it is now. */
  const checkpoint = async (name: string): Promise<void> => {
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
    expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
    // Usable at 375 px: nothing wider than the screen.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  };

  beforeAll(async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    process.stdout.write(`console.browser.test: screenshots in ${SHOTS}\n`);
    receiver = new WebhookReceiver();
    await receiver.start();
    // The production lease timings (10 s), not the tests' 3 s: a browser beside a busy machine must not lose the
    // instance's connection (and the QR code on screen) to a short stall.
    // No instance quota: one account holds more instances than a page of list_instances shows (100).
    stack = await startStack({}, true, {}, { instances: { instanceQuota: 0 } });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 375, height: 812 } });
    page = await context.newPage();
    page.on('dialog', (dialog) => {
      if (dialog.type() === 'confirm') void dialog.accept();
      else {
        alerts.push(dialog.message());
        void dialog.dismiss();
      }
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await receiver?.stop();
  });

  it('serves the console from the gateway with a strict CSP, and / points there', async () => {
    const root = await fetch(`${stack.baseUrl}/`, { redirect: 'manual' });
    expect([301, 302]).toContain(root.status);
    expect(root.headers.get('location')).toBe('/console/');
    const html = await fetch(`${stack.baseUrl}/console/`);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await html.text()).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect((await fetch(`${stack.baseUrl}/console/main.js`)).status).toBe(200);
  });

  it('links a sandbox instance, sends, shows everything live and safely, and redelivers a failed webhook', async () => {
    try {
      await fullFlow();
    } catch (error) {
      await page.screenshot({ path: join(SHOTS, 'failure.png'), fullPage: true });
      throw error;
    }
    expect(alerts).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 90_000);

  const fullFlow = async (): Promise<void> => {
    // Sign in, by keyboard.
    await page.goto(`${stack.baseUrl}/`);
    await page.getByLabel('API token').waitFor();
    await checkpoint('1-sign-in');
    await page.getByLabel('API token').fill(stack.token('browser'));
    await page.keyboard.press('Enter');
    await page.getByText('No instances yet').waitFor();
    await checkpoint('2-instances-empty');
    expect(page.url()).not.toMatch(/eyJ|access_token/);

    // Create: the instance page, with its QR code.
    await page.getByRole('button', { name: 'Create instance' }).click();
    await page.locator('img.qr').waitFor();
    expect(await page.locator('img.qr').getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    const id = /#\/instances\/([0-9A-F]{20})$/.exec(page.url())![1]!;

    // A webhook whose first four answers fail: that delivery is dead-lettered after the test schedule (4 attempts).
    receiver.script('/console', { status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    await page.getByLabel('Webhook URL').fill(receiver.url('/console'));
    await page.getByRole('button', { name: 'Save webhook' }).click();
    const secret = (await page.locator('.secret code').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    receiver.secret('/console', secret);
    await checkpoint('3-instance-qr');

    // Simulated scan: the state turns connected without a reload.
    // A loaded machine may stall NATS long enough for the shown code's connection to end; the console then shows a
    // fresh code (no_qr_waiting), as a person would scan again. Bounded: three scans.
    const connected = page.locator('dd[data-state="connected"]');
    const scanButton = page.getByRole('button', { name: 'Simulate scan' });
    for (let scan = 0; scan < 3 && !(await connected.isVisible()); scan++) {
      if (await scanButton.isVisible()) await scanButton.click();
      await Promise.race([connected.waitFor({ timeout: 15_000 }), page.getByText('(no_qr_waiting)').waitFor({ timeout: 15_000 })]).catch(() => undefined);
    }
    await connected.waitFor();

    // instance.connected met the four failures: dead-lettered, every attempt listed (before other events are sent,
    // which would take some of the scripted failures).
    const dead = page.locator('.deliveries > li[data-status="dead"]').first();
    await dead.waitFor({ timeout: 20_000 });
    expect(await dead.locator('.attempts li').count()).toBe(4);

    // Send a text: sent, delivered and read appear live.
    await page.getByLabel('To (digits, no +)').fill('4915100000001');
    await page.getByLabel('Message (caption for media)').fill('hello from the console');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText(/^Accepted: /).waitFor();
    for (const type of ['MessageSent', 'MessageDelivered', 'MessageRead']) await page.locator(`.timeline li[data-type="${type}"]`).waitFor();

    // Another instance's event (any account's) comes between this one's in the log: the timeline goes on all the same.
    expect((await stack.call('/v1/create_instance', { account: 'someone-else' })).status).toBe(200);
    // An inbound message appears live, as text.
    expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4915100000002&text=${encodeURIComponent(XSS)}`, { account: 'browser' })).status).toBe(
      200,
    );
    const inbound = page.locator('.timeline li[data-type="MessageReceived"] .event-summary');
    await inbound.waitFor();
    expect(await inbound.textContent()).toContain(`text: ${XSS}`);
    expect(await page.locator('img[src="x"]').count()).toBe(0);

    // The failed delivery with its attempts; redeliver it.
    await checkpoint('4-instance-linked');
    const deliveryId = (await dead.getAttribute('data-delivery'))!;
    // The keyboard focus on its button outlives the list's polls (every 3 s).
    await dead.getByRole('button', { name: `Redeliver ${deliveryId}` }).focus();
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(await page.evaluate("document.activeElement && document.activeElement.getAttribute('aria-label')")).toBe(`Redeliver ${deliveryId}`);
    await dead.getByRole('button', { name: `Redeliver ${deliveryId}` }).click();
    await page.locator(`.deliveries > li[data-delivery="${deliveryId}"][data-status="delivered"]`).waitFor({ timeout: 20_000 });
    await checkpoint('5-deliveries-redelivered');

    // A voice note: its caption box is off while it is ticked, and the send says voice_note. The timeline shows it
    // at once (no webhook event announces an acceptance; the file's host is never reached here, and the reset below
    // fails the send while it waits).
    await page.getByLabel('Type', { exact: true }).selectOption('media');
    await page.getByLabel('Media URL').fill('https://files.example/voice.ogg');
    await page.getByLabel('Send as a voice note').check();
    expect(await page.getByLabel('Message (caption for media)').isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const voiceNote = page.locator('.timeline li[data-type="MessageAccepted"] .event-summary', { hasText: 'voice_note: true' });
    await voiceNote.waitFor();
    expect(await voiceNote.textContent()).toContain('media_url: https://files.example/voice.ogg');

    // Reset, confirmed: back to created, and a new QR code.
    await page.getByRole('button', { name: 'Reset…' }).click();
    await page.locator('dd[data-state="created"], dd[data-state="qr"], dd[data-state="connecting"]').first().waitFor();

    // The instances list shows it with its state.
    await page.getByRole('link', { name: 'Instances' }).click();
    await page.locator(`tr[data-instance="${id}"]`).waitFor();
    await checkpoint('6-instances');
  };

  it('lists every instance of an account with more than a page of them (100)', async () => {
    const token = stack.token('many');
    const created: string[] = [];
    for (let i = 0; i < 101; i++) {
      const response = await fetch(`${stack.baseUrl}/v1/create_instance`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      created.push(((await response.json()) as { instance_id: string }).instance_id);
    }
    await page.goto(`${stack.baseUrl}/`);
    await page.evaluate(`sessionStorage.setItem('wagw.console.token', ${JSON.stringify(token)})`);
    await page.reload();
    await page.locator(`tr[data-instance="${created.at(-1)!}"]`).waitFor({ timeout: 10_000 });
    expect(await page.locator('tr[data-instance]').count()).toBe(101);
  }, 60_000);

  it('signs in with an instance token on its instance (it cannot list instances), and skip-to-content keeps the page', async () => {
    const listed = await stack.call('/v1/list_instances', { account: 'browser' });
    const id = (listed.body.instances as Array<{ instance_id: string }>)[0]!.instance_id;
    await page.goto(`${stack.baseUrl}/`);
    await page.evaluate('sessionStorage.clear()');
    await page.reload();
    await page.getByLabel('API token').fill(stack.token('browser', { instanceId: id, scopes: ['send', 'read'] }));
    await page.keyboard.press('Enter');
    await page.locator('dd[data-state]').waitFor();
    expect(page.url()).toMatch(new RegExp(`#/instances/${id}$`));
    expect(await page.getByRole('link', { name: 'Instances' }).count()).toBe(0);
    // "Skip to content" moves the focus to the page, not to another route.
    await page.getByRole('link', { name: 'Skip to content' }).focus();
    await page.keyboard.press('Enter');
    expect(page.url()).toMatch(new RegExp(`#/instances/${id}$`));
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('main');
    await checkpoint('7-instance-token');
  }, 30_000);

  /** Signs in as `account` and opens `hash`. */
  const openAs = async (account: string, hash: string): Promise<void> => {
    await page.goto(`${stack.baseUrl}/console/`);
    await page.evaluate(`sessionStorage.setItem('wagw.console.token', ${JSON.stringify(stack.token(account))})`);
    // A new document, not a hash change: signed in, /console/ already went to #/instances, so opening the list by
    // its hash changed nothing and the page went on as the account signed in before (its list and live stream).
    await page.goto('about:blank');
    await page.goto(`${stack.baseUrl}/console/${hash}`);
  };

  it('says an unknown instance is not found and stops asking about it', async () => {
    await openAs('browser', '#/instances/00000000000000000000');
    await page.getByRole('heading', { name: 'Instance not found' }).waitFor();
    const asked: string[] = [];
    page.on('request', (request) => asked.push(request.url()));
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect(asked.filter((url) => url.includes('/v1/'))).toEqual([]);
  }, 30_000);

  it('reads the status again after a passing error, and keeps a half-edited webhook URL when the instance changes', async () => {
    const created = await stack.call('/v1/create_instance', { account: 'browser' });
    const id = String(created.body.instance_id);
    const hook = encodeURIComponent(receiver.url('/kept'));
    expect((await stack.call(`/v1/set_webhook?instance_id=${id}&webhook_url=${hook}&enable=true`, { account: 'browser' })).status).toBe(200);
    let refused = 0;
    await page.route('**/v1/status?*', async (route) => {
      if (refused++ > 0) return route.continue();
      return route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ error: 'NATS is down', code: 'event_store_unavailable' }),
      });
    });
    await openAs('browser', `#/instances/${id}`);
    await page.getByText('Could not load the status').waitFor();
    await page.locator('dd[data-state]').waitFor({ timeout: 10_000 });
    await page.unroute('**/v1/status?*');
    // A new URL typed, focus gone to Save, then the instance links (an instance event reads the status again).
    await page.locator('img.qr').waitFor();
    expect(await page.getByLabel('Webhook URL').inputValue()).toBe(receiver.url('/kept'));
    await page.getByLabel('Webhook URL').fill('https://hooks.example/edited');
    await page.keyboard.press('Tab');
    expect((await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=4915100000009`, { account: 'browser' })).status).toBe(200);
    await page.locator('dd[data-state="connected"]').waitFor();
    expect(await page.getByLabel('Webhook URL').inputValue()).toBe('https://hooks.example/edited');
  }, 45_000);

  it('goes back to sign-in on a 401 (an expired or foreign token)', async () => {
    await page.evaluate("sessionStorage.setItem('wagw.console.token', 'not-a-token')");
    await page.reload();
    // Said why: a token the gateway cannot read (its API error code), not one wording for every refusal.
    await page.getByText('This is not a valid token for this gateway (invalid_token)').waitFor();
    await checkpoint('8-sign-in-after-401');
  });

  const context_ = (): ConsoleContext => ({ page, stack, receiver, checkpoint, openAs });
  stateChecks(context_);
  listLiveChecks(context_);
  signInChecks(context_);
  sendingChecks(context_);
  webhookChecks(context_);
});
