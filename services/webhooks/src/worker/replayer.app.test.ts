import { InMemoryEventStore, instanceEvent, instanceIdFor, instanceStream, type DeliveryClient } from '@wagw/lib';
import { LaggingStore } from '../../../../test/harness/laggingStore';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { foldDelivery, upcastDelivery } from '../delivery/state';
import { replayEvent, replayStream } from '../replay/events';
import { Attempter } from './attempter';
import { CircuitBreaker } from './circuitBreaker';
import { Replayer } from './replayer';

// The replayer on two in-memory stores (instance events; WEBHOOKS records) with a recording HTTP client: no NATS. The
// endpoint directory folds the instance events at once, or (where a test says) a moment late, as over NATS.

const ID = instanceIdFor('acme', 'create-1');
/** An instance whose webhook is switched off in the middle of a replay. */
const OTHER = instanceIdFor('acme', 'create-2');
/** An instance whose endpoint answers 410 Gone in the middle of a replay. */
const GONE = instanceIdFor('acme', 'create-3');
const URL = 'https://hooks.example/replay';
const SECRET = 'whsec_dGVzdA==';
const T0 = Date.parse('2026-11-22T10:00:00.000Z');
const at = (second: number): string => new Date(T0 + second * 1000).toISOString();

describe('Replayer (application, in-memory stores)', () => {
  const events = new LaggingStore();
  const deliveries = new InMemoryEventStore();
  const endpoints = new EndpointDirectory(events, testLogger());
  const posted: Array<{ id: string; body: { id: string; type: string } }> = [];
  /** Runs at a POST, before its answer (the webhook switched off meanwhile). */
  let duringPost: ((body: { instance_id: string }) => Promise<void>) | null = null;
  /** Answers a POST of this instance with 410 Gone (every other POST is delivered). */
  let goneFor: string | null = null;
  const client: DeliveryClient = {
    deliver: async (_url, body, headers) => {
      posted.push({ id: headers['webhook-id']!, body: JSON.parse(body) as { id: string; type: string } });
      const parsed = JSON.parse(body) as { instance_id: string };
      await duringPost?.(parsed);
      if (parsed.instance_id === goneFor) return { kind: 'gone', status: 410, durationMs: 1 };
      return { kind: 'delivered', status: 200, durationMs: 1 };
    },
    close: async () => undefined,
  };
  const breaker = new CircuitBreaker();
  const attempter = new Attempter(
    { getOrCreate: async () => SECRET, get: async () => SECRET },
    client,
    breaker,
    { schedule: [0], random: () => 0 },
    'w1',
    () => new Date(),
  );
  const replayer = new Replayer(events, deliveries, endpoints, { events, deliveries, attempter, breaker }, testLogger(), {
    ratePerSecond: 1_000,
    ackWaitMs: 5_000,
  });

  /** Appends one event to the instance's stream. */
  const appendTo =
    (instanceId: string) =>
    (event: Parameters<InMemoryEventStore['append']>[1][number], key: string): ReturnType<InMemoryEventStore['append']> =>
      events.append(instanceStream(instanceId), [event], { expectedVersion: 'any', commandId: key });
  /** The instance created at second `from`, its webhook on a second later, then `resets` resets a second apart from `resetsFrom`. */
  const givenInstance = async (instanceId: string, from: number, resetsFrom: number, resets: number): Promise<void> => {
    const append = appendTo(instanceId);
    await append(instanceEvent('InstanceCreated', at(from), { instance_id: instanceId, account: 'acme' }), `${instanceId}-c`);
    await append(instanceEvent('WebhookConfigured', at(from + 1), { url: URL, enabled: true }), `${instanceId}-w`);
    for (let i = 0; i < resets; i++) await append(instanceEvent('InstanceReset', at(resetsFrom + i), {}), `${instanceId}-r${i}`);
  };

  beforeAll(async () => {
    // Sequences 3, 4, 5: three resets, one a second.
    await givenInstance(ID, 0, 10, 3);
    endpoints.start();
    await endpoints.catchUp(1_000);
    await replayer.start();
  });
  afterAll(async () => {
    await replayer.stop();
    await endpoints.stop();
  });

  /** Asks for a replay of the instance's events from T0 on (all types) and waits until it finished: its events. */
  const replayToEnd = async (instanceId: string, replayId: string, requestedAt: string) => {
    const stream = replayStream(instanceId, replayId);
    const request = replayEvent('ReplayRequested', requestedAt, { replay_id: replayId, instance_id: instanceId, since: T0, until: null, types: [] });
    await deliveries.append(stream, [request], { expectedVersion: 0, commandId: replayId });
    return eventually(
      async () => (await deliveries.readStream(stream)).flatMap((c) => c.events),
      (events) => events.some((e) => e.type === 'ReplayFinished'),
    );
  };

  it('resumes a replay where its recorded progress says (after a crash), and records it finished', async () => {
    const stream = replayStream(ID, 'rpl_1');
    const request = replayEvent('ReplayRequested', at(20), { replay_id: 'rpl_1', instance_id: ID, since: T0, until: null, types: [] });
    // An earlier run got past sequence 3 before its replica died.
    const progressed = replayEvent('ReplayProgressed', at(21), { next_sequence: 4, replayed: 1 });
    await deliveries.append(stream, [request, progressed], { expectedVersion: 0, commandId: 'rpl_1' });

    const finished = await eventually(
      async () => (await deliveries.readStream(stream)).flatMap((c) => c.events),
      (all) => all.some((e) => e.type === 'ReplayFinished'),
    );
    expect(finished.at(-1)!.data).toEqual({ replayed: 3, dropped: 0, reason: null });
    // Sequence 3 was not sent again; 4 and 5 went with their original webhook-ids.
    expect(posted.map((p) => p.id)).toEqual(['evt_4_0', 'evt_5_0']);
    expect(posted.map((p) => p.body)).toEqual([expect.objectContaining({ id: 'evt_4_0', type: 'instance.reset' }), expect.objectContaining({ id: 'evt_5_0' })]);
    const records = await deliveries.readPattern(`${ID}.delivered.*`, 0, 10);
    expect(records.commits.map((c) => [c.stream, c.events[0]!.data.replay_of])).toEqual([
      [`${ID}.delivered.rpl_1_evt_4_0`, 'evt_4_0'],
      [`${ID}.delivered.rpl_1_evt_5_0`, 'evt_5_0'],
    ]);
  });

  it('stops a replay whose webhook was switched off, sending nothing (its events are recorded dropped)', async () => {
    await events.append(instanceStream(ID), [instanceEvent('WebhookConfigured', at(30), { url: URL, enabled: false })], {
      expectedVersion: 'any',
      commandId: 'off',
    });
    await endpoints.catchUp(1_000);
    const before = posted.length;
    const all = await replayToEnd(ID, 'rpl_2', at(31));
    expect(all.at(-1)!.data).toEqual({ replayed: 0, dropped: 3, reason: 'the webhook was switched off' });
    expect(posted).toHaveLength(before);
  });

  it('records the events whose turn comes after the webhook was switched off mid-replay as dropped deliveries', async () => {
    const other = OTHER;
    const append = appendTo(other);
    await givenInstance(other, 50, 60, 5);
    await endpoints.catchUp(1_000);
    const resets = (await events.readStream(instanceStream(other))).slice(2).map((c) => `evt_${c.sequence}_0`);
    // The webhook is switched off while the replay's first POST is under way.
    duringPost = async (body) => {
      if (body.instance_id !== other) return;
      duringPost = null;
      await append(instanceEvent('WebhookConfigured', at(70), { url: URL, enabled: false }), 'off2');
      await endpoints.catchUp(1_000);
    };
    const before = posted.length;
    const all = await replayToEnd(other, 'rpl_4', at(71));
    expect(all.at(-1)!.data).toEqual({ replayed: 1, dropped: 4, reason: 'the webhook was switched off' });
    expect(posted.slice(before).map((p) => p.id)).toEqual([resets[0]]);
    // Each event not sent is listed, as a replay's delivery of its own, dropped as any delivery after a switch-off is.
    const dropped = (await deliveries.readPattern(`${other}.delivery.*`, 0, 100)).commits.map((c) => {
      const state = foldDelivery(c.events.map(upcastDelivery));
      return state.exists ? [state.deliveryId, state.replayOf, state.status, state.reason] : null;
    });
    expect(dropped).toEqual(resets.slice(1).map((id) => [`rpl_4_${id}`, id, 'dropped', 'webhook disabled']));
  });

  it('goes on dropping where a stopped replay got (after a crash), though the webhook was switched on again since', async () => {
    await events.append(instanceStream(OTHER), [instanceEvent('WebhookConfigured', at(80), { url: URL, enabled: true })], {
      expectedVersion: 'any',
      commandId: 'on2',
    });
    await endpoints.catchUp(1_000);
    const resets = (await events.readStream(instanceStream(OTHER))).filter((c) => c.events[0]!.type === 'InstanceReset').map((c) => c.sequence);
    const before = posted.length;
    const stream = replayStream(OTHER, 'rpl_5');
    // An earlier run sent the first reset, was stopped at the second, and recorded two drops before its replica died.
    await deliveries.append(
      stream,
      [
        replayEvent('ReplayRequested', at(81), { replay_id: 'rpl_5', instance_id: OTHER, since: T0, until: null, types: [] }),
        replayEvent('ReplayStopped', at(82), { reason: 'the webhook was switched off' }),
        replayEvent('ReplayProgressed', at(83), { next_sequence: resets[3]!, replayed: 1, dropped: 2 }),
      ],
      { expectedVersion: 0, commandId: 'rpl_5' },
    );
    const all = await eventually(
      async () => (await deliveries.readStream(stream)).flatMap((c) => c.events),
      (events) => events.some((e) => e.type === 'ReplayFinished'),
    );
    expect(all.at(-1)!.data).toEqual({ replayed: 1, dropped: 4, reason: 'the webhook was switched off' });
    expect(posted).toHaveLength(before);
    const dropped = (await deliveries.readPattern(`${OTHER}.delivery.*`, 0, 100)).commits
      .filter((c) => c.stream.includes('.rpl_5_'))
      .map((c) => foldDelivery(c.events.map(upcastDelivery)));
    expect(dropped.map((d) => d.exists && [d.deliveryId, d.status])).toEqual(resets.slice(3).map((seq) => [`rpl_5_evt_${seq}_0`, 'dropped']));
  });

  it('sends nothing more after the endpoint answered 410 Gone: the rest are recorded dropped', async () => {
    await givenInstance(GONE, 90, 92, 4);
    await endpoints.catchUp(1_000);
    goneFor = GONE;
    // The directory folds the switch-off the 410 caused 30 ms after it is stored.
    events.delayMs = 30;
    const before = posted.length;
    const all = await replayToEnd(GONE, 'rpl_6', at(99));
    goneFor = null;
    events.delayMs = 0;
    expect(posted.slice(before)).toHaveLength(1);
    expect(all.at(-1)!.data).toEqual({ replayed: 1, dropped: 3, reason: 'the webhook was switched off' });
    expect((await events.readStream(instanceStream(GONE))).at(-1)!.events[0]!.type).toBe('WebhookDisabled');
  });

  it("sends no event of a type outside the webhook's event filter, as live deliveries do", async () => {
    // The receiver asks for message.received only; the instance's past events are resets.
    await events.append(instanceStream(ID), [instanceEvent('WebhookConfigured', at(40), { url: URL, enabled: true, events: ['message.received'] })], {
      expectedVersion: 'any',
      commandId: 'filtered',
    });
    await endpoints.catchUp(1_000);
    const before = posted.length;
    const all = await replayToEnd(ID, 'rpl_3', at(41));
    expect(all.at(-1)!.data).toEqual({ replayed: 0, dropped: 0, reason: null });
    expect(posted).toHaveLength(before);
  });
});
