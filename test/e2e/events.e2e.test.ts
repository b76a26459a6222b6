import { connectNats, JetStreamEventStore, newCommandId, type NatsHandle } from '@wagw/lib';
import { startGateway, type RunningGateway } from '../../services/gateway/src/service';
import { replicaGatewayConfig, startStack, type TestStack } from '../harness/stack';
import { testLogger } from '../harness/logger';
import { SseReader } from '../harness/sseReader';

describe('live events over HTTP (GET /v1/events, server-sent events)', () => {
  let stack: TestStack;
  const extraGateways: RunningGateway[] = [];

  beforeAll(async () => {
    // The production lease timings (10 s), not the tests' 3 s: linking must not depend on how busy the machine is.
    stack = await startStack();
  });
  afterAll(async () => {
    for (const g of extraGateways) await g.close();
    await stack.close();
  });

  /** Another gateway replica on the same services (each stream connection is independent of the replica). */
  const gatewayReplica = async (sse?: { heartbeatMs: number; maxBufferBytes: number }): Promise<RunningGateway> => {
    const gateway = await startGateway(replicaGatewayConfig(stack, sse ? { sse } : {}), testLogger('gateway-replica'));
    extraGateways.push(gateway);
    return gateway;
  };

  const open = async (query = '', options: { account?: string; lastEventId?: string; base?: string } = {}): Promise<SseReader> => {
    const headers: Record<string, string> = { authorization: `Bearer ${stack.token(options.account)}` };
    if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
    const reader = new SseReader(`${options.base ?? stack.baseUrl}/v1/events${query}`, headers);
    const { status, body } = await reader.opened();
    if (status !== 200) throw new Error(`events answered ${status} ${JSON.stringify(body)}`);
    return reader;
  };

  const createInstance = async (account = 'acme'): Promise<string> => (await stack.call('/v1/create_instance', { account })).body.instance_id as string;
  const reset = async (id: string, account = 'acme'): Promise<void> => {
    expect((await stack.call(`/v1/reset_instance?instance_id=${id}`, { account })).status).toBe(200);
  };

  it('answers 401 without a token, 400 for an unknown type or a bad Last-Event-ID, 404 for another account’s instance', async () => {
    const id = await createInstance('acme');
    expect((await stack.call('/v1/events', { token: null })).status).toBe(401);
    const badType = await stack.call('/v1/events?types=message.received,message.nope');
    expect(badType).toEqual({ status: 400, body: expect.objectContaining({ code: 'invalid_types' }) });
    const badId = await stack.call('/v1/events', { headers: { 'last-event-id': 'nope' } });
    expect(badId).toEqual({ status: 400, body: expect.objectContaining({ code: 'invalid_last_event_id' }) });
    const future = await stack.call('/v1/events', { headers: { 'last-event-id': 'evt_999999999_0' } });
    expect(future).toEqual({ status: 400, body: expect.objectContaining({ code: 'invalid_last_event_id' }) });
    expect((await stack.call(`/v1/events?instance_id=${id}`, { account: 'other' })).body).toEqual(expect.objectContaining({ code: 'instance_not_found' }));
    expect((await stack.call(`/v1/events?instance_id=${id}`, { account: 'other' })).status).toBe(404);
    // The token in the query works like everywhere else.
    const reader = new SseReader(`${stack.baseUrl}/v1/events?instance_id=${id}&access_token=${stack.token('acme')}`);
    expect((await reader.opened()).status).toBe(200);
    reader.close();
  });

  it('streams an instance’s events live with the webhook ids and bodies: linking, an inbound message', async () => {
    const id = await createInstance();
    const reader = await open(`?instance_id=${id}`);
    expect((await stack.call(`/v1/get_qrcode?instance_id=${id}`)).status).toBe(200);
    expect((await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=4915100000042`)).status).toBe(200);
    const text = '<img src=x onerror=alert(1)>';
    expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4915100000099&text=${encodeURIComponent(text)}`)).status).toBe(200);
    await reader.until((r) => r.received('message.received').length === 1);
    reader.close();
    expect(reader.received().map((e) => e.event)).toEqual(['instance.connected', 'message.received']);
    for (const e of reader.received()) {
      expect(e.id).toMatch(/^evt_[0-9]+_[0-9]+$/);
      expect(JSON.parse(e.data)).toEqual({ id: e.id, type: e.event, instance_id: id, timestamp: expect.any(String), data: expect.any(Object) });
    }
    expect((JSON.parse(reader.received('message.received')[0]!.data) as { data: unknown }).data).toEqual(
      expect.objectContaining({ from: '4915100000099', text }),
    );
  });

  it('streams the whole account without a filter, never another account’s events, and honours types', async () => {
    const all = await open();
    const onlyConnected = await open('?types=instance.connected');
    const mine = await createInstance('acme');
    const theirs = await createInstance('other');
    await reset(theirs, 'other');
    await reset(mine);
    await stack.call(`/v1/get_qrcode?instance_id=${mine}`);
    await stack.call(`/v1/sandbox/scan?instance_id=${mine}&number=4915100000043`);
    await all.until((r) => r.received('instance.connected').length === 1);
    await onlyConnected.until((r) => r.received().length === 1);
    all.close();
    onlyConnected.close();
    const instancesSeen = new Set(all.received().map((e) => (JSON.parse(e.data) as { instance_id: string }).instance_id));
    expect(instancesSeen).toEqual(new Set([mine]));
    expect(all.received().map((e) => e.event)).toEqual(['instance.reset', 'instance.connected']);
    expect(onlyConnected.received().map((e) => e.event)).toEqual(['instance.connected']);
  });

  it('resumes with Last-Event-ID on another gateway replica after its gateway shut down: nothing lost, nothing repeated', async () => {
    const id = await createInstance();
    const replica = await gatewayReplica();
    const first = await open(`?instance_id=${id}`, { base: `http://127.0.0.1:${replica.port}` });
    for (let i = 0; i < 3; i++) await reset(id);
    await first.until((r) => r.received().length === 3);
    await replica.close();
    await first.until((r) => r.ended);
    expect(first.received('end').map((e) => JSON.parse(e.data) as { code: string })).toEqual([expect.objectContaining({ code: 'server_shutdown' })]);
    for (let i = 0; i < 4; i++) await reset(id);
    const last = first.received().at(-1)!.id!;
    const second = await open(`?instance_id=${id}`, { lastEventId: last });
    await second.until((r) => r.received().length === 4);
    await new Promise((resolve) => setTimeout(resolve, 300));
    second.close();
    const ids = [...first.received(), ...second.received()].map((e) => e.id);
    expect(ids).toHaveLength(7);
    expect(new Set(ids).size).toBe(7);
    const sequences = ids.map((i) => Number(i!.split('_')[1]));
    expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
  });

  describe('a reader that stops reading', () => {
    let nats: NatsHandle;
    beforeAll(async () => {
      nats = await connectNats({ url: stack.nats.url, name: 'events-test', logger: testLogger('events-test') });
    });
    afterAll(async () => nats.close());

    it('is cut off with a final slow_reader event, its buffer bounded, and can resume after the last event it got', async () => {
      const bound = 64 * 1024;
      const replica = await gatewayReplica({ heartbeatMs: 15_000, maxBufferBytes: bound });
      const id = await createInstance();
      const reader = await open(`?instance_id=${id}`, { base: `http://127.0.0.1:${replica.port}` });
      reader.pause();
      const cutOffs = async (): Promise<number> =>
        Number(/^sse_slow_readers_total(?:{[^}]*})? (\d+)/m.exec(await (await fetch(`http://127.0.0.1:${replica.port}/metrics`)).text())?.[1] ?? 0);
      const cutOffsBefore = await cutOffs();
      // 640 inbound messages of 32 KB (20 MB): more than the socket buffers hold on loopback, appended straight to the log.
      const store = await JetStreamEventStore.open(nats);
      const text = 'x'.repeat(32 * 1024);
      const occurredAt = new Date().toISOString();
      const appends = Array.from({ length: 640 }, (_, i) =>
        store.append(`${id}.message.IN${i}`, [{ type: 'MessageReceived', schemaVersion: 1, occurredAt, data: { from: '4915100000077', text } }], {
          expectedVersion: 'any',
          commandId: newCommandId(),
        }),
      );
      await Promise.all(appends);
      // Paused until the gateway has cut the reader off (its counter says so; bounded), however slowly the events flow.
      for (let i = 0; i < 300 && (await cutOffs()) < cutOffsBefore + 1; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      reader.resume();
      await reader.until((r) => r.ended, 20_000);
      expect(reader.ended).toBe(true);
      const ends = reader.received('end').map((e) => JSON.parse(e.data) as { code: string });
      expect(ends).toEqual([expect.objectContaining({ code: 'slow_reader' })]);
      const got = reader.received('message.received');
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThan(640);
      // The reader resumes after the last event it got and receives the rest, none twice.
      const rest = await open(`?instance_id=${id}&types=message.received`, { lastEventId: got.at(-1)!.id! });
      await rest.until((r) => r.received().length === 640 - got.length, 20_000);
      rest.close();
      expect(rest.received()).toHaveLength(640 - got.length);
      expect(new Set([...got, ...rest.received()].map((e) => e.id)).size).toBe(640);
    }, 60_000);
  });
});
