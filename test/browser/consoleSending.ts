import { createInstance, scanShownCode, shown, sleep, type Context } from './consoleContext';

/** How many sends of `text` the instance's history holds (read from the API, not from the page). */
const acceptedWithText = async (ctx: Context, id: string, text: string): Promise<number> => {
  const history = await ctx().stack.call(`/v1/history?instance_id=${id}&types=MessageAccepted&limit=200`, { account: 'browser' });
  expect(history.status).toBe(200);
  return (history.body.events as Array<{ data: { text?: string | null } }>).filter((e) => e.data.text === text).length;
};

/** Sending from the console: once per click, what the timeline says of files, why sends wait, send-only tokens. */
export const sendingChecks = (ctx: Context): void => {
  it('sends a message once on a double click, names a received file in the timeline, and says why sends wait', async () => {
    const { page, stack, openAs } = ctx();
    const id = await createInstance(stack, 'browser');
    await openAs('browser', `#/instances/${id}`);
    await scanShownCode(ctx(), 'browser', id);

    await page.getByLabel('To (digits, no +)').fill('4915100000005');
    await page.getByLabel('Message (caption for media)').fill('sent once');
    await page.getByRole('button', { name: 'Send', exact: true }).dblclick();
    await page.getByText(/^Accepted: /).waitFor();
    await page.locator('.timeline li[data-type="MessageRead"]').waitFor({ timeout: 15_000 });
    // A second call would have been made at once, beside the first: both would be in the history by now.
    await sleep(500);
    expect(await acceptedWithText(ctx, id, 'sent once')).toBe(1);

    // A received document: the timeline says a file came, and which.
    const inbound = await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4915100000006&text=the%20offer&media=document`, { account: 'browser' });
    expect(inbound.status).toBe(200);
    const received = page.locator('.timeline li[data-type="MessageReceived"] .event-summary', { hasText: 'the offer' });
    await received.waitFor();
    expect(await received.textContent()).toMatch(/media: [a-z]+\/[\w.+-]+.*\d+ bytes/);

    // WhatsApp restricts the account's sends: the status says they wait, and until when; lifted, the line goes.
    expect((await stack.call(`/v1/sandbox/restrict?instance_id=${id}&seconds=600`, { account: 'browser' })).status).toBe(200);
    await shown(page, 'dd[data-restricted]');
    expect(await page.locator('dd[data-restricted]').textContent()).toMatch(/restricts this account's sends \(until /);
    expect((await stack.call(`/v1/sandbox/restrict?instance_id=${id}&lift=true`, { account: 'browser' })).status).toBe(200);
    await page.locator('dd[data-restricted]').waitFor({ state: 'detached', timeout: 12_000 });
  }, 60_000);

  it('signs in with an instance token that may only send: its page, refusals where it reads, and its sends are taken', async () => {
    const { page, stack } = ctx();
    const id = await createInstance(stack, 'browser');
    await page.goto(`${stack.baseUrl}/console/`);
    await page.evaluate('sessionStorage.clear()');
    await page.reload();
    await page.getByLabel('API token').fill(stack.token('browser', { instanceId: id, scopes: ['send'] }));
    await page.keyboard.press('Enter');
    await page.getByText('Could not load the status').first().waitFor();
    expect(page.url()).toMatch(new RegExp(`#/instances/${id}$`));
    expect(await page.getByText(/insufficient_scope/).count()).toBeGreaterThan(0);
    // The send is the gateway's to judge: taken with this token, and refused only because nothing is linked yet.
    await page.getByLabel('To (digits, no +)').fill('4915100000007');
    await page.getByLabel('Message (caption for media)').fill('from a send-only token');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText(/\(not_linked\)/).waitFor();
  }, 30_000);
};
