import { allDeliveryIds, createInstance, scanShownCode, sleep, waitUntil, type Context } from './consoleContext';

/** How many deliveries the console reads in one page (sections/deliveries.ts). */
const PAGE = 50;

/** The deliveries list beyond its first page, and the webhook form after the gateway switched the webhook off. */
export const webhookChecks = (ctx: Context): void => {
  it('shows older deliveries page by page, and the 3 s poll keeps them and the keyboard focus', async () => {
    const c = ctx();
    const { page, stack, receiver, openAs } = c;
    const id = await createInstance(stack, 'paging');
    const set = await stack.call(`/v1/set_webhook?instance_id=${id}&webhook_url=${encodeURIComponent(receiver.url('/paging'))}&enable=true`, {
      account: 'paging',
    });
    expect(set.status).toBe(200);
    receiver.secret('/paging', String(set.body.signing_secret));
    await openAs('paging', `#/instances/${id}`);
    await scanShownCode(c, 'paging', id);
    // More deliveries than a page: instance.connected and one message.received per inbound message.
    for (let i = 0; i < PAGE + 5; i++) {
      expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4915100000003&text=m${i}`, { account: 'paging' })).status).toBe(200);
    }
    let ids: string[] = [];
    for (let i = 0; i < 100 && ids.length < PAGE + 6; i++) {
      await sleep(200);
      ids = await allDeliveryIds(stack, 'paging', id);
    }
    expect(ids.length).toBe(PAGE + 6);
    const items = page.locator('.deliveries > li');
    await waitUntil(page, `document.querySelectorAll('.deliveries > li').length === ${PAGE}`);
    await page.getByRole('button', { name: 'Show older deliveries' }).click({ timeout: 5_000 });
    await waitUntil(page, `document.querySelectorAll('.deliveries > li').length === ${ids.length}`);
    expect(await page.evaluate<string[]>(`[...document.querySelectorAll('.deliveries > li')].map((e) => e.getAttribute('data-delivery'))`)).toEqual(ids);
    // All shown: no more to ask for, and the focus is on the first one it brought.
    expect(await page.getByRole('button', { name: 'Show older deliveries' }).count()).toBe(0);
    const focused = "document.activeElement && document.activeElement.closest('li[data-delivery]')?.getAttribute('data-delivery')";
    expect(await page.evaluate(focused)).toBe(ids[PAGE]);

    // A new delivery: the poll of the newest page puts it first, the older ones stay, and so does the focus.
    expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4915100000003&text=late`, { account: 'paging' })).status).toBe(200);
    await waitUntil(page, `document.querySelectorAll('.deliveries > li').length === ${ids.length + 1}`, 15_000);
    await sleep(3_500);
    expect(await items.count()).toBe(ids.length + 1);
    expect(await page.evaluate(focused)).toBe(ids[PAGE]);
  }, 90_000);

  it('unticks "Enabled" when the gateway switched the webhook off (the endpoint answered 410 Gone)', async () => {
    const c = ctx();
    const { page, stack, receiver, openAs } = c;
    const id = await createInstance(stack, 'gone');
    await openAs('gone', `#/instances/${id}`);
    await page.getByLabel('Webhook URL').fill(receiver.url('/gone'));
    const enabled = page.getByLabel('Enabled');
    expect(await enabled.isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    receiver.secret('/gone', (await page.locator('.secret code').textContent())!);
    await scanShownCode(c, 'gone', id);
    await page.locator('.deliveries > li[data-status="delivered"]').waitFor({ timeout: 20_000 });
    // The status was read on instance.connected; a message (no instance event) is answered 410: that delivery is
    // dead and the webhook off, with nothing on the live stream about it.
    receiver.script('/gone', { status: 410 });
    expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4915100000004&text=gone`, { account: 'gone' })).status).toBe(200);
    await page.locator('.deliveries > li[data-status="dead"]').waitFor({ timeout: 20_000 });
    const status = await stack.call(`/v1/status?instance_id=${id}`, { account: 'gone' });
    expect((status.body.webhook as { enabled: boolean }).enabled).toBe(false);
    await waitUntil(page, `!document.getElementById('wh-enabled-${id}').checked`, 10_000);
    expect(await page.getByLabel('Webhook URL').inputValue()).toBe(receiver.url('/gone'));
  }, 60_000);

  it('shows the webhook event filter, keeps it when the form is saved, and saves a new one', async () => {
    const c = ctx();
    const { page, stack, receiver, openAs } = c;
    const id = await createInstance(stack, 'filter');
    const hook = encodeURIComponent(receiver.url('/filter'));
    const set = await stack.call(`/v1/set_webhook?instance_id=${id}&webhook_url=${hook}&enable=true&events=message.received,message.failed`, {
      account: 'filter',
    });
    expect(set.status).toBe(200);
    const eventsOf = async (): Promise<string[]> =>
      ((await stack.call(`/v1/status?instance_id=${id}`, { account: 'filter' })).body.webhook as { events: string[] }).events;
    await openAs('filter', `#/instances/${id}`);
    const field = page.getByLabel('Event types');
    await waitUntil(page, `document.getElementById('wh-events-${id}').value !== ''`);
    expect(await field.inputValue()).toBe('message.received, message.failed');
    // Saved as it is (say, to switch it off): the filter stays.
    await page.getByLabel('Enabled').uncheck();
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.locator('.secret code').waitFor();
    expect(await eventsOf()).toEqual(['message.received', 'message.failed']);
    // Emptied: every type again; an unknown one is refused with the API's words, the filter unchanged.
    await field.fill('message.recieved');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Unknown webhook event type(s): message.recieved', { exact: false }).waitFor();
    expect(await eventsOf()).toEqual(['message.received', 'message.failed']);
    await field.fill('');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await waitUntil(page, `document.querySelector('#main .secret code') !== null`);
    for (let i = 0; i < 50 && (await eventsOf()).length === 2; i++) await sleep(100);
    expect((await eventsOf()).length).toBeGreaterThan(10);
  }, 60_000);
};
