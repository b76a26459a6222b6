import type { Route } from 'playwright-core';
import { answer, createInstance, shown, sleep, type Context } from './consoleContext';

/** Deep links kept through sign-in, and sign-in errors that say what went wrong. */
export const signInChecks = (ctx: Context): void => {
  it('opens the page a deep link asked for after signing in (a link that is no console page: the list)', async () => {
    const { page, stack } = ctx();
    const id = await createInstance(stack, 'browser');
    await page.goto(`${stack.baseUrl}/console/`);
    await page.evaluate('sessionStorage.clear()');
    await page.goto('about:blank');
    await page.goto(`${stack.baseUrl}/console/#/instances/${id}`);
    await page.getByLabel('API token').fill(stack.token('browser'));
    await page.keyboard.press('Enter');
    await shown(page, 'dd[data-state], tr[data-instance]');
    expect(page.url()).toMatch(new RegExp(`#/instances/${id}$`));
    await shown(page, 'dd[data-state]');

    // Signed out by the button (it forgets the page): a storage cleared under the open page raced its polls, whose 401
    // remembered the instance page again (a CI run opened it instead of the list).
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    await page.goto('about:blank');
    await page.goto(`${stack.baseUrl}/console/#/nowhere`);
    await page.getByLabel('API token').fill(stack.token('browser'));
    await page.keyboard.press('Enter');
    await shown(page, 'tr[data-instance]');
    expect(page.url()).toMatch(/#\/instances$/);
  }, 30_000);

  it('after a 401, opens the page it left again for the same account only (another account gets its list)', async () => {
    const { page, stack, openAs } = ctx();
    const id = await createInstance(stack, 'browser');
    const expireOnce = async (): Promise<void> => {
      await openAs('browser', `#/instances/${id}`);
      await shown(page, 'dd[data-state]');
      // The deliveries poll (every 3 s) meets the expiry: its 401 sends the page back to sign-in.
      await page.route('**/v1/webhook_deliveries?*', answer(401, { error: 'The token has expired', code: 'token_expired' }));
      await page.getByLabel('API token').waitFor({ timeout: 10_000 });
      await page.unroute('**/v1/webhook_deliveries?*');
    };
    await expireOnce();
    await page.getByLabel('API token').fill(stack.token('someone-else'));
    await page.keyboard.press('Enter');
    await shown(page, 'tr[data-instance], .notice-empty');
    expect(page.url()).toMatch(/#\/instances$/);

    await expireOnce();
    await page.getByLabel('API token').fill(stack.token('browser'));
    await page.keyboard.press('Enter');
    await shown(page, 'dd[data-state]');
    expect(page.url()).toMatch(new RegExp(`#/instances/${id}$`));
  }, 45_000);

  it('says why a sign-in failed: invalid, expired or revoked token, rate limited, gateway down or unreachable', async () => {
    const { page, stack, checkpoint } = ctx();
    const signIn = async (token: string, expected: RegExp): Promise<void> => {
      await page.goto(`${stack.baseUrl}/console/`);
      await page.evaluate('sessionStorage.clear()');
      await page.reload();
      await page.getByLabel('API token').fill(token);
      await page.keyboard.press('Enter');
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(expected);
      // Still on sign-in, with nothing kept.
      expect(page.url()).toMatch(/#\/signin$/);
      expect(await page.evaluate("sessionStorage.getItem('wagw.console.token')")).toBeNull();
    };
    await signIn('not-a-token', /not a valid token.*invalid_token/i);
    await checkpoint('10-sign-in-invalid');

    // Revoked for real: every replica refuses it within a second.
    const revoked = stack.token('browser');
    const claims = JSON.parse(Buffer.from(revoked.split('.')[1]!, 'base64url').toString('utf8')) as { jti: string };
    expect((await stack.call(`/v1/revoke_token?token_id=${claims.jti}`, { account: 'browser' })).status).toBe(200);
    for (let i = 0; i < 30 && (await stack.call('/v1/list_instances', { token: revoked })).status !== 401; i++) await sleep(100);
    await signIn(revoked, /revoked.*token_revoked/i);

    // Tokens always expire after an hour or more here: the gateway's answer for an expired one, as it words it.
    const token = stack.token('browser');
    const route = '**/v1/list_instances*';
    const cases: Array<[(route: Route) => Promise<void>, RegExp]> = [
      [answer(401, { error: 'The token has expired', code: 'token_expired' }), /expired.*token_expired/i],
      [answer(429, { error: 'Rate limit reached; retry in 7 seconds', code: 'rate_limited' }, { 'retry-after': '7' }), /try again in 7 seconds/i],
      [answer(503, { error: 'The event store (NATS) is unreachable', code: 'event_store_unavailable' }, { 'retry-after': '2' }), /gateway is unavailable/i],
      [answer(500, { error: 'Internal error', code: 'internal' }), /gateway is unavailable/i],
      [(r) => r.abort('connectionrefused'), /cannot reach the gateway/i],
    ];
    for (const [handler, expected] of cases) {
      await page.route(route, handler);
      try {
        await signIn(token, expected);
      } finally {
        await page.unroute(route);
      }
    }
    await checkpoint('11-sign-in-unreachable');
  }, 45_000);
};
