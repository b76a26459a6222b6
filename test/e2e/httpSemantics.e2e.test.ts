import { WEBHOOK_EVENT_TYPE_NAMES } from '@wagw/lib';
import { stackWithReceiver } from '../harness/receiverStack';
import { linkInSandbox } from '../harness/sandboxLink';
import { SseReader } from '../harness/sseReader';

describe('HTTP semantics: methods, paging, webhook event filters', () => {
  const context = stackWithReceiver();

  const create = async (account: string): Promise<string> => (await context.stack.call('/v1/create_instance', { account })).body.instance_id as string;

  it('answers a known path with a wrong method 405, the Allow header and the JSON error body; an unknown path 404', async () => {
    const response = await fetch(`${context.stack.baseUrl}/v1/create_instance`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${context.stack.token()}` },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(await response.json()).toEqual({ error: expect.stringContaining('DELETE'), code: 'method_not_allowed' });
    const send = await context.stack.call('/v1/send', { method: 'PUT', body: '{}' });
    expect(send.status).toBe(405);
    const unknown = await context.stack.call('/v1/nothing_here');
    expect(unknown).toEqual({ status: 404, body: { error: 'Route GET /v1/nothing_here not found', code: 'route_not_found' } });
  });

  it('answers HEAD on an API route 405 and runs nothing: no message sent, no instance created, no stream left hanging', async () => {
    const listed = async () =>
      ((await context.stack.call('/v1/list_instances?limit=1000')).body.instances as Array<{ instance_id: string }>).map((i) => i.instance_id);
    const id = await create('acme');
    await linkInSandbox(context.stack, id, '4915100000042');
    const before = await listed();
    const head = (path: string) =>
      fetch(`${context.stack.baseUrl}${path}`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${context.stack.token()}` },
        signal: AbortSignal.timeout(5_000),
      });
    const send = await head(`/v1/send?instance_id=${id}&number=4915112345678&type=text&message=head`);
    expect(send.status).toBe(405);
    expect(send.headers.get('allow')).toBe('GET, POST');
    const created = await head('/v1/create_instance');
    expect(created.status).toBe(405);
    expect(created.headers.get('allow')).toBe('GET');
    expect((await head('/v1/events')).status).toBe(405);
    expect((await head(`/v1/status?instance_id=${id}`)).status).toBe(405);

    expect(await listed()).toEqual(before);
    expect((await context.stack.call(`/v1/history?instance_id=${id}&types=MessageAccepted`)).body.events).toEqual([]);
    // Static files have no side effects: they keep HEAD (registered by @fastify/static itself).
    const page = await fetch(`${context.stack.baseUrl}/console/`, { method: 'HEAD', signal: AbortSignal.timeout(5_000) });
    expect(page.status).toBe(200);
  });

  it('pages list_instances with a cursor and a limit: every instance once, oldest first, then next_cursor null', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await create('pager'));
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 10; page++) {
      const r = await context.stack.call(`/v1/list_instances?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { account: 'pager' });
      expect(r.status).toBe(200);
      const instances = r.body.instances as Array<{ instance_id: string }>;
      expect(instances.length).toBeLessThanOrEqual(2);
      seen.push(...instances.map((i) => i.instance_id));
      if (r.body.next_cursor === null) break;
      cursor = r.body.next_cursor as string;
    }
    expect(seen).toEqual(ids);
  });

  it.each([
    ['limit=0', 'invalid_request'],
    ['limit=1001', 'invalid_request'],
    ['limit=ten', 'invalid_request'],
    ['cursor=not-an-id', 'invalid_request'],
  ])('refuses list_instances?%s with a 400 (%s)', async (query, code) => {
    const r = await context.stack.call(`/v1/list_instances?${query}`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(code);
  });

  it("refuses a well-formed cursor that is not one of the caller's instances with 400 invalid_cursor", async () => {
    const foreign = await create('someone-else');
    const r = await context.stack.call(`/v1/list_instances?cursor=${foreign}`, { account: 'pager' });
    expect(r).toEqual({ status: 400, body: { error: expect.any(String), code: 'invalid_cursor' } });
    const deliveries = await context.stack.call(`/v1/webhook_deliveries?instance_id=${foreign}&cursor=evt_1_0`, { account: 'someone-else' });
    expect(deliveries.body.code).toBe('invalid_cursor');
  });

  it('shows every event type in status when set_webhook had no filter, and the filter when it had one', async () => {
    const id = await create('acme');
    const url = encodeURIComponent('https://hooks.example.com/x');
    await context.stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${url}`);
    expect((await context.stack.call(`/v1/status?instance_id=${id}`)).body.webhook).toEqual({
      url: 'https://hooks.example.com/x',
      enabled: true,
      events: [...WEBHOOK_EVENT_TYPE_NAMES],
    });
    const set = await context.stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${url}&events=message.failed,%20message.received`);
    expect(set.status).toBe(200);
    expect((await context.stack.call(`/v1/status?instance_id=${id}`)).body.webhook).toMatchObject({ events: ['message.received', 'message.failed'] });
  });

  it('refuses a webhook_url or media_url on port 0, as one on a port past 65535: nothing can be reached there', async () => {
    const id = await create('acme');
    for (const url of ['http://127.0.0.1:0/hook', 'http://127.0.0.1:00/hook', 'http://127.0.0.1:99999/hook']) {
      const hook = await context.stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(url)}`);
      expect([url, hook.status, hook.body.code]).toEqual([url, 400, 'invalid_webhook_url']);
      const send = await context.stack.call(`/v1/send?instance_id=${id}&number=4915112345678&type=media&media_url=${encodeURIComponent(url)}`);
      expect([url, send.status, send.body.code]).toEqual([url, 400, 'invalid_media_url']);
    }
    expect((await context.stack.call(`/v1/status?instance_id=${id}`)).body.webhook).toBeNull();
  });

  it('refuses an unknown event type in the filter with 400 invalid_events naming it', async () => {
    const id = await create('acme');
    const r = await context.stack.call(
      `/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent('https://hooks.example.com/x')}&events=message.recieved`,
    );
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: expect.stringContaining('message.recieved'), code: 'invalid_events' });
  });

  it('refuses a filter of separators only (events=,) with 400 invalid_events; an empty events= keeps every type', async () => {
    const id = await create('acme');
    const set = (events: string) =>
      context.stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent('https://hooks.example.com/x')}&events=${events}`);
    for (const events of [',', '%20,%20', ',,']) {
      const r = await set(events);
      expect([events, r.status, r.body.code]).toEqual([events, 400, 'invalid_events']);
    }
    expect((await context.stack.call(`/v1/status?instance_id=${id}`)).body.webhook).toBeNull();
    expect((await set('')).status).toBe(200);
    expect((await context.stack.call(`/v1/status?instance_id=${id}`)).body.webhook).toMatchObject({ events: [...WEBHOOK_EVENT_TYPE_NAMES] });
  });

  it('refuses a types filter of separators only (types=,) with 400 invalid_types on history, events and replays; an empty types= is no filter', async () => {
    const id = await create('acme');
    const hook = await context.stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(context.receiver.url('/types'))}`);
    context.receiver.secret('/types', hook.body.signing_secret as string);
    const since = encodeURIComponent(new Date().toISOString());
    const routes = [`/v1/history?instance_id=${id}`, `/v1/events?instance_id=${id}`, `/v1/replay_webhooks?instance_id=${id}&since=${since}`];
    for (const route of routes) {
      for (const types of [',', '%20,%20', ',,', '%20']) {
        const r = await context.stack.call(`${route}&types=${types}`);
        expect([route, types, r.status, r.body.code]).toEqual([route, types, 400, 'invalid_types']);
        expect(r.body.error).toContain('types names no');
      }
    }
    const history = await context.stack.call(`/v1/history?instance_id=${id}&types=`);
    expect(history.status).toBe(200);
    expect((history.body.events as Array<{ type: string }>).map((e) => e.type)).toContain('InstanceCreated');
    expect((await context.stack.call(`/v1/replay_webhooks?instance_id=${id}&since=${since}&types=`)).status).toBe(200);
    const stream = new SseReader(`${context.stack.baseUrl}/v1/events?instance_id=${id}&types=`, { authorization: `Bearer ${context.stack.token()}` });
    expect((await stream.opened()).status).toBe(200);
    stream.close();
  });

  it('delivers only the event types of the filter: a reset outside it is not delivered, one inside it is', async () => {
    const id = await create('acme');
    const hook = encodeURIComponent(context.receiver.url('/filtered'));
    const off = await context.stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${hook}&events=message.received`);
    context.receiver.secret('/filtered', off.body.signing_secret as string);
    expect((await context.stack.call(`/v1/reset_instance?instance_id=${id}`)).status).toBe(200);
    await context.stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${hook}&events=instance.reset`);
    expect((await context.stack.call(`/v1/reset_instance?instance_id=${id}`)).status).toBe(200);
    await context.receiver.waitFor('/filtered', 1);
    // An instance's events go out in order, so the first reset was decided on before the second one was delivered.
    const got = context.receiver.received.filter((r) => r.path === '/filtered');
    expect(got.map((r) => r.body.type)).toEqual(['instance.reset']);
    const deliveries = await context.stack.call(`/v1/webhook_deliveries?instance_id=${id}`);
    expect((deliveries.body.deliveries as unknown[]).length).toBe(1);
  });
});
