import { InMemoryEventStore, instanceEvent, instanceIdFor, instanceStream, type DeliveryClient } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { replayEvent, replayStream } from '../replay/events';
import { Attempter } from './attempter';
import { CircuitBreaker } from './circuitBreaker';
import { Replayer } from './replayer';

// A replay goes to the *current* webhook: the webhook's own event filter (set_webhook ... events=) must hold for it
// as it does for live events (router.ts, webhookWants): "events of other types are not delivered".

const ID = instanceIdFor('acme', 'filtered-1');
const URL = 'https://hooks.example/filtered';
const SECRET = 'whsec_dGVzdA==';
const T0 = Date.parse('2026-11-22T10:00:00.000Z');
const at = (second: number): string => new Date(T0 + second * 1000).toISOString();

describe('Replayer and the webhook event filter (application, in-memory stores)', () => {
  const events = new InMemoryEventStore();
  const deliveries = new InMemoryEventStore();
  const endpoints = new EndpointDirectory(events, testLogger());
  const posted: string[] = [];
  const client: DeliveryClient = {
    deliver: async (_url, body) => {
      posted.push((JSON.parse(body) as { type: string }).type);
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

  beforeAll(async () => {
    const append = (event: Parameters<InMemoryEventStore['append']>[1][number], key: string) =>
      events.append(instanceStream(ID), [event], { expectedVersion: 'any', commandId: key });
    await append(instanceEvent('InstanceCreated', at(0), { instance_id: ID, account: 'acme' }), 'c');
    // The receiver asked for message.received only.
    await append(instanceEvent('WebhookConfigured', at(1), { url: URL, enabled: true, events: ['message.received'] }), 'w');
    for (let i = 0; i < 3; i++) await append(instanceEvent('InstanceReset', at(10 + i), {}), `r${i}`);
    endpoints.start();
    await endpoints.catchUp(1_000);
    await replayer.start();
  });
  afterAll(async () => {
    await replayer.stop();
    await endpoints.stop();
  });

  it('sends no event of a type the webhook filters out (replay without types)', async () => {
    const stream = replayStream(ID, 'rpl_f');
    await deliveries.append(stream, [replayEvent('ReplayRequested', at(20), { replay_id: 'rpl_f', instance_id: ID, since: T0, until: null, types: [] })], {
      expectedVersion: 0,
      commandId: 'rpl_f',
    });
    const all = await eventually(
      async () => (await deliveries.readStream(stream)).flatMap((c) => c.events),
      (es) => es.some((e) => e.type === 'ReplayFinished'),
    );
    expect(posted).toEqual([]);
    expect(all.at(-1)!.data).toEqual({ replayed: 0, reason: null });
  });
});
