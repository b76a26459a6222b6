import type { SandboxPlatform } from '../../services/sessions/src/connector/sandbox';
import { stackWithReceiver } from '../harness/receiverStack';
import { linkInSandbox } from '../harness/sandboxLink';
import { SseReader } from '../harness/sseReader';
import { eventually } from '../harness/wait';

const OUT = 'SECRET-OUTBOUND-caption';
const IN = 'SECRET-INBOUND-text';
const NAME = 'SECRET-PUSH-NAME';
const TO = '4917612345678';
const FROM = '4915100000001';

interface HistoryEvent {
  sequence: number;
  stream: string;
  type: string;
  occurred_at: string;
  data: Record<string, unknown>;
}

/** GET|POST /v1/erase_instance_data: message content erased by destroying the instance's data key, the audit trail kept. */
describe('erasure over HTTP (erase_instance_data)', () => {
  const env = stackWithReceiver();
  const api = () => env.stack.client();
  const sandbox = (): SandboxPlatform => {
    if (!env.stack.sessions.sandbox) throw new Error('the test stack runs the sandbox connector');
    return env.stack.sessions.sandbox;
  };

  const linked = async (path: string): Promise<string> => {
    const { data } = await api().GET('/create_instance');
    const id = data!.instance_id;
    const set = await api().GET('/set_webhook', { params: { query: { instance_id: id, enable: 'true', webhook_url: env.receiver.url(path) } } });
    env.receiver.secret(path, set.data!.signing_secret);
    await linkInSandbox(env.stack, id, '4915112345678');
    return id;
  };
  const history = async (id: string): Promise<HistoryEvent[]> => {
    const page = await api().GET('/history', { params: { query: { instance_id: id, limit: 1000 } } });
    expect(page.response.status).toBe(200);
    return page.data!.events;
  };
  /** The verified deliveries to `path` of these webhook types, once there are `count` (bounded). */
  const hooks = (path: string, types: string[], count: number) =>
    eventually(
      async () => env.receiver.on(path).filter((r) => types.includes(r.body.type)),
      (got) => got.length >= count,
    );
  const erase = (id: string) => api().GET('/erase_instance_data', { params: { query: { instance_id: id } } });
  const hasSecret = (text: string): boolean => [OUT, IN, NAME].some((s) => text.includes(s));

  it('keeps every event, type, time and id after erasure while the content reads as erased in history, export, replay, live events and status', async () => {
    const id = await linked('/erase');
    const sent = await api().POST('/send', { body: { instance_id: id, number: TO, type: 'text', message: OUT } });
    const messageId = sent.data!.message_id;
    expect((await env.stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=${FROM}&text=${IN}&push_name=${NAME}`)).status).toBe(200);
    const live = await hooks('/erase', ['message.received', 'message.sent'], 2);
    expect(live.some((r) => JSON.stringify(r.body).includes(IN))).toBe(true);
    const before = await eventually(
      () => history(id),
      (h) => h.some((e) => e.type === 'MessageSent') && h.some((e) => e.type === 'MessageReceived'),
    );
    expect(before.find((e) => e.type === 'MessageAccepted')?.data.text).toBe(OUT);
    const beforeErasure = new Date().toISOString();

    const erased = await erase(id);
    expect(erased.data).toEqual({ status: 200, message: 'Instance data erased', instance_id: id, data_erased_at: expect.any(String) });

    // History: the same events (sequence, stream, type, time) plus the erasure; content null with erased: true.
    const after = await history(id);
    expect(after.slice(0, before.length).map(({ sequence, stream, type, occurred_at }) => ({ sequence, stream, type, occurred_at }))).toEqual(
      before.map(({ sequence, stream, type, occurred_at }) => ({ sequence, stream, type, occurred_at })),
    );
    expect(after.at(-1)).toMatchObject({ type: 'InstanceDataErased', occurred_at: erased.data!.data_erased_at });
    expect(after.find((e) => e.type === 'MessageAccepted')?.data).toEqual({
      message_id: messageId,
      to: TO,
      type: 'text',
      text: null,
      media_url: null,
      filename: null,
      erased: true,
    });
    expect(after.find((e) => e.type === 'MessageReceived')?.data).toMatchObject({ from: FROM, push_name: null, text: null, erased: true });
    expect(after.find((e) => e.type === 'MessageSent')?.data).toEqual({ message_id: messageId, to: TO });
    expect(hasSecret(JSON.stringify(after))).toBe(false);

    // Export.
    const exported = await fetch(`${env.stack.baseUrl}/v1/history/export?instance_id=${id}`, { headers: { authorization: `Bearer ${env.stack.token()}` } });
    const ndjson = await exported.text();
    expect(exported.status).toBe(200);
    expect(ndjson.trim().split('\n')).toHaveLength(after.length + 1);
    expect(hasSecret(ndjson)).toBe(false);

    // Status: when, now; and not yet at a moment before.
    const status = await api().GET('/status', { params: { query: { instance_id: id } } });
    expect(status.data?.data_erased_at).toBe(erased.data!.data_erased_at);
    const earlier = await api().GET('/status', { params: { query: { instance_id: id, at: beforeErasure } } });
    expect(earlier.data?.data_erased_at).toBeNull();

    // The erasure itself reaches the webhook.
    const [notice] = await hooks('/erase', ['instance.data_erased'], 1);
    expect(notice!.body).toMatchObject({ instance_id: id, timestamp: erased.data!.data_erased_at });

    // Live events from before the messages: the same ids, the content erased.
    const firstHook = env.receiver.on('/erase')[0]!;
    const reader = new SseReader(`${env.stack.baseUrl}/v1/events?instance_id=${id}`, {
      authorization: `Bearer ${env.stack.token()}`,
      'last-event-id': firstHook.id,
    });
    expect((await reader.opened()).status).toBe(200);
    await reader.until((r) => r.received('instance.data_erased').length === 1);
    reader.close();
    const received = reader.received('message.received');
    expect(received.map((e) => e.id)).toEqual(live.filter((r) => r.body.type === 'message.received').map((r) => r.id));
    expect((JSON.parse(received[0]!.data) as { data: unknown }).data).toMatchObject({ from: FROM, text: null, erased: true });
    expect(
      hasSecret(
        reader
          .received()
          .map((e) => e.data)
          .join(),
      ),
    ).toBe(false);

    // Replay to a new receiver: the original webhook-ids, the content erased.
    const set = await api().GET('/set_webhook', { params: { query: { instance_id: id, enable: 'true', webhook_url: env.receiver.url('/erase-replay') } } });
    env.receiver.secret('/erase-replay', set.data!.signing_secret);
    const since = before[0]!.occurred_at;
    const replay = await api().GET('/replay_webhooks', { params: { query: { instance_id: id, since, types: 'message.received,message.sent' } } });
    expect(replay.response.status).toBe(200);
    const replayed = await env.receiver.waitFor('/erase-replay', 2);
    expect(replayed.map((r) => r.id).sort()).toEqual(live.map((r) => r.id).sort());
    expect(replayed.find((r) => r.body.type === 'message.received')?.body.data).toMatchObject({ text: null, push_name: null, erased: true });
    expect(hasSecret(JSON.stringify(replayed))).toBe(false);
  });

  it("makes a received file unfetchable: GET /v1/media answers 404 once the instance's content is erased", async () => {
    const id = await linked('/media');
    expect((await env.stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=${FROM}&media=image`)).status).toBe(200);
    const received = await eventually(
      () => history(id),
      (h) => h.some((e) => e.type === 'MessageReceived'),
    );
    const messageId = received.find((e) => e.type === 'MessageReceived')!.data.message_id as string;
    const media = () => env.stack.call(`/v1/media?instance_id=${id}&message_id=${messageId}`);
    expect((await media()).status).toBe(200);
    await erase(id);
    // Every replica drops the instance's refs when it sees the erasure (milliseconds later).
    const gone = await eventually(media, (r) => r.status === 404);
    expect([gone.status, gone.body.code]).toEqual([404, 'message_not_found']);
    // Told why: a client that saw the message received would otherwise doubt its own id.
    expect(gone.body.error).toContain('erased');
  });

  it('is idempotent, and the instance keeps working afterwards with a new key', async () => {
    const id = await linked('/again');
    await api().POST('/send', { body: { instance_id: id, number: TO, type: 'text', message: OUT } });
    const first = await erase(id);
    const second = await erase(id);
    expect(second.data).toEqual(first.data);
    const post = await env.stack.call('/v1/erase_instance_data', { method: 'POST', body: JSON.stringify({ instance_id: id }) });
    expect(post.body).toEqual(first.data);
    expect((await history(id)).filter((e) => e.type === 'InstanceDataErased')).toHaveLength(1);

    const later = await api().POST('/send', { body: { instance_id: id, number: TO, type: 'text', message: 'after the erasure' } });
    await eventually(
      async () => sandbox().sent(id),
      (s) => s.some((m) => m.messageId === later.data!.message_id),
    );
    expect(
      sandbox()
        .sent(id)
        .find((m) => m.messageId === later.data!.message_id)?.text,
    ).toBe('after the erasure');
    const accepted = (await history(id)).filter((e) => e.type === 'MessageAccepted').map((e) => e.data.text);
    expect(accepted).toEqual([null, 'after the erasure']);
    // Content was stored since: erasing again records a new erasure.
    await erase(id);
    expect((await history(id)).filter((e) => e.type === 'InstanceDataErased')).toHaveLength(2);
  });

  it('fails a send accepted but not yet sent when the content is erased, with reason content_erased, and sends nothing', async () => {
    const id = await linked('/queued');
    // The network is down: the instance cannot reconnect until the test lets it.
    const connect = jest.spyOn(sandbox(), 'connect').mockRejectedValue(new Error('network down'));
    try {
      sandbox().disconnect(id, 'connection_lost');
      await eventually(
        () => api().GET('/status', { params: { query: { instance_id: id } } }),
        (s) => s.data?.state !== 'connected',
      );
      const queued = await api().POST('/send', { body: { instance_id: id, number: TO, type: 'text', message: OUT } });
      expect(queued.response.status).toBe(200);
      expect((await erase(id)).response.status).toBe(200);
      connect.mockRestore();
      const failed = await eventually(
        async () => (await history(id)).find((e) => e.type === 'MessageFailed'),
        (e) => e !== undefined,
        20_000,
      );
      expect(failed?.data).toEqual({ message_id: queued.data!.message_id, to: TO, reason: 'content_erased' });
      const [hook] = await hooks('/queued', ['message.failed'], 1);
      expect(hook!.body.data).toMatchObject({ message_id: queued.data!.message_id, reason: 'content_erased' });
      expect(sandbox().sent(id)).toEqual([]);
    } finally {
      connect.mockRestore();
    }
  });

  it('answers 400 for a missing or malformed instance id, 404 for an unknown or foreign instance, 403 without the manage scope', async () => {
    const missing = await env.stack.call('/v1/erase_instance_data');
    expect(missing.status).toBe(400);
    const malformed = await env.stack.call('/v1/erase_instance_data?instance_id=not%20an%20id');
    expect(malformed.status).toBe(400);
    const { data } = await env.stack.client({ account: 'someone-else' }).GET('/create_instance');
    const foreign = await erase(data!.instance_id);
    expect([foreign.response.status, foreign.error?.code]).toEqual([404, 'instance_not_found']);
    const unknown = await erase('0123456789ABCDEF0123');
    expect(unknown.response.status).toBe(404);
    // An instance token needs the manage scope: read alone may not erase.
    const mine = (await api().GET('/create_instance')).data!.instance_id;
    const reader = env.stack.client({ token: env.stack.token('acme', { instanceId: mine, scopes: ['read'] }) });
    const refused = await reader.GET('/erase_instance_data', { params: { query: { instance_id: mine } } });
    expect([refused.response.status, refused.error?.code]).toEqual([403, 'insufficient_scope']);
    const manager = env.stack.client({ token: env.stack.token('acme', { instanceId: mine, scopes: ['manage'] }) });
    expect((await manager.GET('/erase_instance_data', { params: { query: { instance_id: mine } } })).response.status).toBe(200);
  });
});
