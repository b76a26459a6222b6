import { answer, createInstance, type Context } from './consoleContext';

/** Every state /v1/status and /v1/list_instances answer (lib's InstanceLifecycle). */
const STATES = ['created', 'connecting', 'qr', 'connected', 'disconnected', 'logged_out', 'failed'];

/** The state badge: its words and colours for every state, in the list and on the instance page. */
export const stateChecks = (ctx: Context): void => {
  it('labels and styles every instance state distinctly and readably, in the list and on the instance page', async () => {
    const { page, stack, openAs, checkpoint } = ctx();
    const rows = STATES.map((state, i) => ({ instance_id: `${'0'.repeat(19)}${i}`, state, linked_number: null, state_since: new Date().toISOString() }));
    await page.route('**/v1/list_instances*', answer(200, { status: 200, message: '7 instance(s)', instances: rows, next_cursor: null }));
    try {
      await openAs('browser', '#/instances');
      await page.locator(`tr[data-instance="${rows[6]!.instance_id}"]`).waitFor();
      // A string: the tests' TypeScript has no DOM types.
      const badges = await page.evaluate<Array<{ text: string; style: string }>>(
        `[...document.querySelectorAll('tr[data-instance] .badge')].map((e) => ({ text: e.textContent.trim(), style: getComputedStyle(e).backgroundColor + ' ' + getComputedStyle(e).color }))`,
      );
      expect(badges).toHaveLength(STATES.length);
      // Words a person reads (not an API enum such as logged_out), one per state, each in its own colours.
      for (const { text } of badges) expect(text).toMatch(/^[A-Z][a-z]+( [a-z]+)*…?$/);
      expect(new Set(badges.map((b) => b.text)).size).toBe(STATES.length);
      expect(new Set(badges.map((b) => b.style)).size).toBe(STATES.length);
      // Contrast of every badge (axe), at 375 px.
      await checkpoint('9-state-badges');
      const qrLabel = badges[STATES.indexOf('qr')]!.text;
      await page.unroute('**/v1/list_instances*');
      // The instance page shows the same badge: a new instance shows its QR code (state qr).
      const id = await createInstance(stack, 'browser');
      await page.goto(`${stack.baseUrl}/console/#/instances/${id}`);
      await page.locator('dd[data-state="qr"] .badge').waitFor({ timeout: 15_000 });
      expect((await page.locator('dd[data-state="qr"] .badge').textContent())?.trim()).toBe(qrLabel);
    } finally {
      await page.unroute('**/v1/list_instances*');
    }
  }, 45_000);
};
