import type { Request } from 'playwright-core';
import { createInstance, sleep, type Context } from './consoleContext';

/** Longer than the list's poll of transient states (pages/instances.ts, 4 s): a window in which one would be seen. */
const QUIET_MS = 5_000;

/** The tab hidden and seen again, as a browser says it to the page. */
const HIDE =
  "Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' }); document.dispatchEvent(new Event('visibilitychange'))";
const SHOW = "delete document.visibilityState; document.dispatchEvent(new Event('visibilitychange'))";

/**
 * The instances list follows states no live event announces: a QR code asked for by another client (qr, connecting),
 * without a reload, and instances created elsewhere once the tab is seen again; and it asks only while that can
 * happen, and only while the tab is seen.
 */
export const listLiveChecks = (ctx: Context): void => {
  it('shows in the list an instance another client is linking (qr, then connected) without a reload, keeping the focus; polls only while needed', async () => {
    const { page, stack, openAs } = ctx();
    const account = 'listlive';
    const id = await createInstance(stack, account);
    const row = `tr[data-instance="${id}"]`;
    const focusedRow = "document.activeElement && document.activeElement.closest('tr[data-instance]')?.getAttribute('data-instance')";
    await openAs(account, '#/instances');
    await page.locator(`${row} .badge.state-created`).waitFor();
    await page.locator(`${row} a`).focus();

    // Another tab or a teammate asks for its QR code: no live event says so (QR codes never enter the event log).
    const qr = await stack.call(`/v1/get_qrcode?instance_id=${id}`, { account });
    expect(qr.status).toBe(200);
    await page.locator(`${row} .badge.state-qr`).waitFor({ timeout: 10_000 });
    expect(await page.evaluate(focusedRow)).toBe(id);

    // Scanned: instance.connected says so. A code whose connection ended (a loaded machine) is asked for again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const scan = await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=4915100000077`, { account });
      if (scan.status === 200) break;
      await stack.call(`/v1/get_qrcode?instance_id=${id}`, { account });
      await sleep(1_000);
    }
    await page.locator(`${row} .badge.state-connected`).waitFor({ timeout: 15_000 });
    expect(await page.evaluate(focusedRow)).toBe(id);

    const reads: string[] = [];
    const onRequest = (request: Request): void => {
      if (/\/v1\/(status|list_instances)\b/.test(request.url())) reads.push(request.url());
    };
    page.on('request', onRequest);
    try {
      // Nothing transient: the list asks nothing (the live stream says what changes from here).
      await sleep(1_000);
      reads.length = 0;
      await sleep(QUIET_MS);
      expect(reads).toEqual([]);

      // Reset (instance.reset): created again, a QR code may be asked for any moment, so the list polls; but not
      // while the tab is hidden, and again, at once, when it is seen.
      expect((await stack.call(`/v1/reset_instance?instance_id=${id}`, { account })).status).toBe(200);
      await page.locator(`${row} .badge.state-created`).waitFor({ timeout: 10_000 });
      await page.evaluate(HIDE);
      await sleep(1_000);
      reads.length = 0;
      await stack.call(`/v1/get_qrcode?instance_id=${id}`, { account });
      await sleep(QUIET_MS);
      expect(reads).toEqual([]);
      expect(await page.locator(`${row} .badge.state-created`).count()).toBe(1);
      await page.evaluate(SHOW);
      await page.locator(`${row} .badge.state-qr`).waitFor({ timeout: 2_000 });
      expect(reads.length).toBeGreaterThan(0);

      // An instance created elsewhere (another tab, a teammate, a script) makes no live event: it is listed when the
      // tab is seen again.
      await page.evaluate(HIDE);
      const other = await createInstance(stack, account);
      await sleep(500);
      expect(await page.locator(`tr[data-instance="${other}"]`).count()).toBe(0);
      await page.evaluate(SHOW);
      await page.locator(`tr[data-instance="${other}"] .badge.state-created`).waitFor({ timeout: 2_000 });
    } finally {
      page.off('request', onRequest);
    }
  }, 60_000);
};
