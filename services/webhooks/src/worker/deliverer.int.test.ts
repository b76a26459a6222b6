import {
  connectNats,
  createDeliveryClient,
  DURABLES,
  InMemoryWebhookSecretStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  JetStreamEventStore,
  STREAMS,
  type NatsHandle,
  type NewEvent,
} from '@wagw/lib';
import { startTestNats, type TestNats } from '../../../../test/harness/natsServer';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { WebhookReceiver } from '../../../../test/harness/webhookReceiver';
import { deliveryEvent, deliveryStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { Attempter } from './attempter';
import { CircuitBreaker } from './circuitBreaker';
import { Deliverer } from './deliverer';

const DEAD = instanceIdFor('acme', 'dead-endpoint');
const HEALTHY = instanceIdFor('other', 'healthy');
/** More retries waiting than JetStream's usual bound of unacked messages (1,000). */
const WAITING = 1_200;

// The deliverer on a real nats-server: retries waiting for their time are scheduled, not held unacked, so they
// cannot hold up another instance's, and they survive an outage of NATS.
describe('Deliverer on JetStream: one dead endpoint does not stop the other instances', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  let store: JetStreamEventStore;
  const receiver = new WebhookReceiver();
  const client = createDeliveryClient({ timeoutMs: 2_000, allowPrivateNetworks: true });
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'deliverer-int', logger: testLogger() });
    store = await JetStreamEventStore.open(handle, {
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

  it(`schedules ${WAITING} retries of a dead endpoint instead of holding them, and delivers another instance's retries on time`, async () => {
    const append = (stream: string, ...events: NewEvent[]) => store.append(stream, events, { expectedVersion: 'any', commandId: `c-${Math.random()}` });
    const endpoints = new EndpointDirectory(store, testLogger());
    endpoints.start();
    const secrets = new InMemoryWebhookSecretStore();
    const at = new Date().toISOString();
    for (const [id, path] of [
      [DEAD, '/dead'],
      [HEALTHY, '/healthy'],
    ] as const) {
      await append(instanceStream(id), instanceEvent('InstanceCreated', at, { instance_id: id, account: 'acme' }));
      await append(instanceStream(id), instanceEvent('WebhookConfigured', at, { url: receiver.url(path), enabled: true }));
      receiver.secret(path, await secrets.getOrCreate(id));
      await endpoints.reach(id, 2_000);
    }
    /** A delivery whose first attempt failed, its next due `dueInMs` after it. */
    const failedOnce = (id: string, deliveryId: string, dueInMs: number) =>
      append(
        deliveryStream(id, deliveryId),
        deliveryEvent('DeliveryScheduled', at, {
          delivery_id: deliveryId,
          instance_id: id,
          event_type: 'message.sent',
          body: JSON.stringify({ id: deliveryId, type: 'message.sent', instance_id: id, timestamp: at, data: {} }),
        }),
        deliveryEvent('DeliveryAttempted', at, {
          attempt: 1,
          url: 'http://127.0.0.1:9/',
          outcome: 'retry',
          status: 500,
          error: null,
          duration_ms: 1,
          next_attempt_in_ms: dueInMs,
          worker: 'w0',
        }),
      );
    for (let i = 1; i <= WAITING; i++) await failedOnce(DEAD, `evt_${i}_0`, 60 * 60_000);
    const breaker = new CircuitBreaker(5, 30_000);
    const attempter = new Attempter(secrets, client, breaker, { schedule: [0, 0, 2_000, 60_000], random: () => 0.5 }, 'w1', () => new Date());
    const deliverer = new Deliverer(store, store, endpoints, attempter, breaker, testLogger(), {
      random: () => 0.5,
      concurrency: 8,
      batch: 256,
      ackWaitMs: 90_000,
      now: () => new Date(),
      holdUpToMs: 1_000,
    });
    const consumer = () => handle.jsm.consumers.info(STREAMS.webhooks.name, DURABLES.webhooksDeliverer);
    /** Schedules pending in the stream (-1 while NATS does not answer). */
    const schedules = async (): Promise<number> =>
      handle.jsm.streams
        .info(STREAMS.webhooks.name, { subjects_filter: `${STREAMS.webhooks.subjectPrefix}_schedule.>` })
        .then((info) => Object.keys(info.state.subjects ?? {}).length)
        .catch(() => -1);
    await deliverer.start();
    try {
      // Every waiting retry was taken, scheduled for its time and acked: none is held unacked by the consumer.
      await eventually(consumer, (i) => i.num_pending === 0 && i.num_ack_pending === 0, 30_000);
      expect(await schedules()).toBe(WAITING);
      // They survive an outage of NATS (the schedules are stored with the stream).
      await nats.restart();
      expect(await eventually(schedules, (n) => n === WAITING, 15_000)).toBe(WAITING);

      // Another instance's due retry goes out at once; its next one, 2 s later, waits as a schedule.
      const dueAt = Date.now();
      receiver.script('/healthy', { status: 500 });
      await failedOnce(HEALTHY, 'evt_1_1', 0);
      await eventually(
        async () => receiver.received.filter((r) => r.path === '/healthy').length,
        (n) => n === 1,
        5_000,
      );
      expect(Date.now() - dueAt).toBeLessThan(5_000);
      const firstAt = Date.now();
      await eventually(
        async () => receiver.received.filter((r) => r.path === '/healthy').length,
        (n) => n === 2,
        10_000,
      );
      expect(Date.now() - firstAt).toBeGreaterThanOrEqual(1_500);
      // The second POST arrived; its attempt is recorded once its answer is in (a moment later on a busy machine).
      const types = await eventually(
        async () => (await store.readStream(deliveryStream(HEALTHY, 'evt_1_1'))).flatMap((c) => c.events.map((e) => e.type)),
        (seen) => seen.length >= 4,
        5_000,
      );
      expect(types).toEqual(['DeliveryScheduled', 'DeliveryAttempted', 'DeliveryAttempted', 'DeliveryAttempted']);
      expect((await store.readStream(`${deliveryStream(HEALTHY, 'evt_1_1')}.due`)).map((c) => c.events[0]!.type)).toEqual(['DeliveryDue']);
      // A marker is a work item: it expires (a week), so markers of a long outage do not fill the disk.
      const marker = await handle.jsm.streams.getMessage(STREAMS.webhooks.name, {
        last_by_subj: `${STREAMS.webhooks.subjectPrefix}.${deliveryStream(HEALTHY, 'evt_1_1')}.due`,
      });
      expect(marker?.header.get('Nats-TTL')).toBe('604800s');
      expect(receiver.received.filter((r) => r.path === '/dead')).toHaveLength(0);
      expect(await schedules()).toBe(WAITING);
    } finally {
      await deliverer.stop();
      await endpoints.stop();
    }
  }, 60_000);
});
