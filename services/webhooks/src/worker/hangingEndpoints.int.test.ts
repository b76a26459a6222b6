import {
  connectNats,
  createDeliveryClient,
  InMemoryWebhookSecretStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  JetStreamEventStore,
  messageEvent,
  messageStream,
  STREAMS,
  type NatsHandle,
  type NewEvent,
} from '@wagw/lib';
import { startTestNats, type TestNats } from '../../../../test/harness/natsServer';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { WebhookReceiver, type Reply } from '../../../../test/harness/webhookReceiver';
import { Sequencer, type SequencerLease, type SequencerMembers } from '../cluster/sequencer';
import type { SequencerSender } from '../cluster/sequencer';
import { deliveryStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { Attempter } from './attempter';
import { CircuitBreaker } from './circuitBreaker';
import { Router } from './router';

/** The service's bounds, scaled down: events in flight to first attempts over all instances, and in one lane. */
const MAX_IN_FLIGHT = 40;
const MAX_PER_INSTANCE = 10;
/** The attempt time-out (WEBHOOK_TIMEOUT_MS, 15 s in the service). */
const TIMEOUT_MS = 3_000;
/** Many more hanging instances than it takes to fill the bound (MAX_IN_FLIGHT / MAX_PER_INSTANCE). */
const HANGING = 12;
const EVENTS_EACH = 15;
/**
 * More hanging instances than the delivery client once had connections per origin (64). Every endpoint, hanging or
 * not, is a path on the one receiver (one origin), like a SaaS backend's `https://api.example.com/hooks/<tenant>`:
 * past that cap, the healthy instance's attempt waited for a connection until a hanging one timed out.
 */
const HANGING_ON_ONE_ORIGIN = 70;

// The sequencer's durable consumer on a real nats-server, the real router, attempter, circuit breaker and delivery
// client, and a real HTTP server on 127.0.0.1 whose hanging paths accept each request and never answer. Membership,
// lease and the work channel are stand-ins for a single replica (every instance is worked on locally).
describe('First attempts on JetStream: instances whose endpoints hang do not hold up the others', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  let events: JetStreamEventStore;
  let deliveries: JetStreamEventStore;
  const receiver = new WebhookReceiver();
  const client = createDeliveryClient({ timeoutMs: TIMEOUT_MS, allowPrivateNetworks: true });
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'hanging-int', logger: testLogger() });
    events = await JetStreamEventStore.open(handle, { streamName: STREAMS.events.name, subjectPrefix: STREAMS.events.subjectPrefix, logger: testLogger() });
    deliveries = await JetStreamEventStore.open(handle, {
      streamName: STREAMS.webhooks.name,
      subjectPrefix: STREAMS.webhooks.subjectPrefix,
      logger: testLogger(),
      scheduledCommitTtlMs: 7 * 24 * 60 * 60_000,
    });
    await receiver.start();
  });
  afterAll(async () => {
    await client.close();
    await receiver.stop();
    await handle.close();
    await nats.dispose();
  });

  /** `hangingCount` instances whose endpoints hang get `eventsEach` events; then a healthy instance gets one. */
  const scenario = async (tag: string, hangingCount: number, eventsEach: number): Promise<void> => {
    const append = (stream: string, ...list: NewEvent[]) => events.append(stream, list, { expectedVersion: 'any', commandId: `c-${Math.random()}` });
    const at = new Date().toISOString();
    const endpoints = new EndpointDirectory(events, testLogger());
    endpoints.start();
    const secrets = new InMemoryWebhookSecretStore();
    const hanging = Array.from({ length: hangingCount }, (_, i) => instanceIdFor(`noisy-${tag}`, `hang-${i}`));
    const healthy = instanceIdFor(`quiet-${tag}`, 'healthy');
    const hangs: Reply[] = Array.from({ length: eventsEach }, () => 'hang');
    for (const [i, id] of [...hanging, healthy].entries()) {
      const path = id === healthy ? `/${tag}/healthy` : `/${tag}/hang-${i}`;
      await append(instanceStream(id), instanceEvent('InstanceCreated', at, { instance_id: id, account: 'acme' }));
      await append(instanceStream(id), instanceEvent('WebhookConfigured', at, { url: receiver.url(path), enabled: true }));
      receiver.secret(path, await secrets.getOrCreate(id));
      if (id !== healthy) receiver.script(path, ...hangs);
      await endpoints.reach(id, 2_000);
    }
    const breaker = new CircuitBreaker(5, 30_000);
    const attempter = new Attempter(secrets, client, breaker, { schedule: [0, 5_000, 30_000], random: () => 0.5 }, 'w1', () => new Date());
    const router = new Router(events, deliveries, endpoints, attempter, breaker, testLogger('router'), {
      concurrency: 256,
      maxPerInstance: MAX_PER_INSTANCE,
      attemptTimeoutMs: TIMEOUT_MS,
      slowAfterMs: 300,
    });
    const lease: SequencerLease = {
      start: async () => undefined,
      stop: async () => undefined,
      acquire: async () => true,
      owns: () => true,
      onLost: () => undefined,
      onFreed: () => undefined,
    };
    const members: SequencerMembers = { self: 'a', usable: () => ['a'], unreachable: () => undefined, onGone: () => undefined };
    const sender: SequencerSender = { send: async () => ({ kind: 'lost' }), abandon: () => undefined };
    const sequencer = new Sequencer(events, lease, members, sender, (id, d, arrived) => router.handle(id, d, arrived), testLogger('sequencer'), {
      ackWaitMs: TIMEOUT_MS + 5_000,
      batch: 16,
      claimEveryMs: 60_000,
      drainTimeoutMs: 100,
      maxInFlight: MAX_IN_FLIGHT,
    });
    try {
      await sequencer.start();
      for (let e = 0; e < eventsEach; e++) {
        for (const id of hanging) await append(messageStream(id, `m${e}`), messageEvent('MessageSent', at, { message_id: `m${e}`, to: '4915100000001' }));
      }
      /** Instances (of the hanging ones) with a delivery recorded, and how many deliveries they have in all. */
      const recorded = async (): Promise<{ instances: number; deliveries: number }> => {
        const read = await Promise.all(hanging.map((id) => deliveries.readPattern(deliveryStream(id, '*'), 1, 1_000)));
        return { instances: read.filter((r) => r.commits.length > 0).length, deliveries: new Set(read.flatMap((r) => r.commits.map((c) => c.stream))).size };
      };
      // Every hanging endpoint has an attempt under way (handed off: the bound is filled behind them) before the
      // healthy event is raised, and far from its time-out.
      await eventually(recorded, (r) => r.instances === hangingCount, 4 * TIMEOUT_MS);
      const raised = Date.now();
      await append(messageStream(healthy, 'ok'), messageEvent('MessageSent', at, { message_id: 'ok', to: '4915100000002' }));
      const [got] = await receiver.waitFor(`/${tag}/healthy`, 1, 4 * TIMEOUT_MS);
      // Well before the first hanging attempt times out: nothing of the healthy instance waits on them.
      expect(got!.at - raised).toBeLessThan(TIMEOUT_MS / 2);
      // Nothing of the hanging instances is lost: each event is recorded as a delivery for the deliverer.
      const all = await eventually(recorded, (r) => r.deliveries === hangingCount * eventsEach, 4 * TIMEOUT_MS);
      expect(all.deliveries).toBe(hangingCount * eventsEach);
    } finally {
      await sequencer.stop();
      await router.idle();
      sequencer.close();
      await endpoints.stop();
    }
  };

  it(`delivers a healthy instance's webhook at once while ${HANGING} instances' endpoints hang`, () => scenario('bound', HANGING, EVENTS_EACH), 60_000);

  it(
    `delivers it at once while ${HANGING_ON_ONE_ORIGIN} instances' endpoints on the same origin hang`,
    () => scenario('origin', HANGING_ON_ONE_ORIGIN, 1),
    60_000,
  );
});
