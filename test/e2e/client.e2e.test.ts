import { exportHistory, getMedia } from '@wagw/client';
import { stackWithReceiver } from '../harness/receiverStack';
import { linkInSandbox } from '../harness/sandboxLink';
import { eventually } from '../harness/wait';

// The main flows through the client generated from the OpenAPI document (@wagw/client): what the document promises
// (paths, parameters, bodies, answers) is what these calls compile against and what the gateway answers.
describe('the API through the generated client', () => {
  const context = stackWithReceiver();

  const createInstance = async (account = 'acme'): Promise<string> => {
    const { data, response } = await context.stack.client({ account }).GET('/create_instance');
    expect(response.status).toBe(200);
    return data!.instance_id;
  };

  it('links an instance, sends a message idempotently and follows it on the filtered webhook and in the history', async () => {
    const api = context.stack.client();
    const id = await createInstance();
    const set = await api.GET('/set_webhook', {
      params: { query: { instance_id: id, enable: 'true', webhook_url: context.receiver.url('/client'), events: 'message.sent,message.delivered' } },
    });
    expect(set.data).toMatchObject({ status: 200, success: true, signing_secret: expect.stringMatching(/^whsec_/) });
    context.receiver.secret('/client', set.data!.signing_secret);

    const qr = await api.GET('/get_qrcode', { params: { query: { instance_id: id } } });
    expect(qr.data?.qrcode).toMatch(/^data:image\/png;base64,/);
    const scan = await api.GET('/sandbox/scan', { params: { query: { instance_id: id, number: '4915112345678' } } });
    expect(scan.response.status).toBe(200);
    const status = await eventually(
      () => api.GET('/status', { params: { query: { instance_id: id } } }),
      (s) => s.data?.state === 'connected',
    );
    expect(status.data).toMatchObject({ state: 'connected', linked_number: '4915112345678', webhook: { events: ['message.sent', 'message.delivered'] } });

    const body = { instance_id: id, number: '4917612345678', type: 'text' as const, message: 'hello from the client' };
    const headers = { 'idempotency-key': 'client-order-1' };
    const first = await api.POST('/send', { body, params: { header: headers } });
    const repeat = await api.POST('/send', { body, params: { header: headers } });
    expect(first.data).toEqual({ status: 200, message: 'Message accepted for sending', message_id: expect.any(String) });
    expect(repeat.data?.message_id).toBe(first.data!.message_id);

    const hooks = await context.receiver.waitFor('/client', 2);
    expect(hooks.map((h) => [h.body.type, h.body.data.message_id])).toEqual([
      ['message.sent', first.data!.message_id],
      ['message.delivered', first.data!.message_id],
    ]);
    const history = await api.GET('/history', { params: { query: { instance_id: id, message_id: first.data!.message_id } } });
    expect(history.data?.events.map((e) => e.type)).toEqual(expect.arrayContaining(['MessageAccepted', 'MessageSent', 'MessageDelivered']));
    // A delivery is recorded just after the receiver answered it: wait for both records.
    const all = await eventually(
      () => api.GET('/webhook_deliveries', { params: { query: { instance_id: id } } }),
      (d) => d.data?.deliveries.length === 2,
    );
    expect(all.data?.deliveries.map((d) => d.event_type)).toEqual(['message.delivered', 'message.sent']);
    const pageOne = await api.GET('/webhook_deliveries', { params: { query: { instance_id: id, limit: 1 } } });
    const pageTwo = await api.GET('/webhook_deliveries', { params: { query: { instance_id: id, limit: 1, cursor: pageOne.data!.next_cursor! } } });
    expect([...pageOne.data!.deliveries, ...pageTwo.data!.deliveries]).toEqual(all.data!.deliveries);
    expect(pageTwo.data?.next_cursor).toBeNull();

    const reset = await api.GET('/reset_instance', { params: { query: { instance_id: id } } });
    expect(reset.data).toEqual({ status: 200, message: 'Instance reset', success: true });
  });

  it('lists instances page by page with the cursor the client hands back', async () => {
    const api = context.stack.client({ account: 'client-pager' });
    const ids = [await createInstance('client-pager'), await createInstance('client-pager'), await createInstance('client-pager')];
    const first = await api.GET('/list_instances', { params: { query: { limit: 2 } } });
    const second = await api.GET('/list_instances', { params: { query: { limit: 2, cursor: first.data!.next_cursor! } } });
    expect([...first.data!.instances, ...second.data!.instances].map((i) => i.instance_id)).toEqual(ids);
    expect(second.data!.next_cursor).toBeNull();
  });

  it('reads a received file and the NDJSON export, which are not JSON, through the helpers that parse them as such', async () => {
    const api = context.stack.client();
    const id = await createInstance();
    await linkInSandbox(context.stack, id, '4915112340001');
    const inbound = await api.GET('/sandbox/inbound', { params: { query: { instance_id: id, from: '4917612345678', media: 'document', media_size: 5000 } } });
    expect(inbound.response.status).toBe(200);
    const received = await eventually(
      () => api.GET('/history', { params: { query: { instance_id: id, types: 'MessageReceived' } } }),
      (h) => h.data?.events.length === 1,
    );
    const messageId = received.data!.events[0]!.data.message_id as string;

    const file = await getMedia(api, { instance_id: id, message_id: messageId });
    expect([file.response.status, file.data?.type, file.data?.size]).toEqual([200, 'application/pdf', 5000]);
    expect(file.response.headers.get('content-disposition')).toMatch(/^attachment; filename="sandbox.pdf"/);
    const none = await getMedia(api, { instance_id: id, message_id: 'in_000000000000000000000000' });
    expect([none.response.status, none.error?.code]).toEqual([404, 'message_not_found']);

    const exported = await exportHistory(api, { instance_id: id, types: 'MessageReceived' });
    const lines = exported
      .data!.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.type ?? l.next_cursor)).toEqual(['MessageReceived', null]);
  });

  it('gets the documented error bodies as typed errors: 401 without a credential, 404 for a foreign instance, 400 for bad input', async () => {
    const anonymous = await context.stack.client({ token: null }).GET('/create_instance');
    expect([anonymous.response.status, anonymous.error]).toEqual([401, { error: expect.any(String), code: 'missing_token' }]);
    const foreign = await createInstance('someone-else');
    const notMine = await context.stack.client().GET('/status', { params: { query: { instance_id: foreign } } });
    expect([notMine.response.status, notMine.error?.code]).toEqual([404, 'instance_not_found']);
    const bad = await context.stack.client().POST('/send', { body: { instance_id: foreign, number: '+49 151', type: 'text', message: 'x' } });
    expect([bad.response.status, bad.error?.code]).toEqual([400, 'invalid_number']);
  });
});
