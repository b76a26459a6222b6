import {
  createDeliveryClient,
  InMemoryEventStore,
  InMemoryWebhookSecretStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  unavailable,
  type Delivery as StoreDelivery,
  type EventStore,
  type NewEvent,
  type Subscription,
} from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { sleep } from '../../../../test/harness/wait';
import { WebhookReceiver } from '../../../../test/harness/webhookReceiver';
import { deliveryDue, deliveryEvent, deliveryStream, dueStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { Attempter } from './attempter';
import { CircuitBreaker } from './circuitBreaker';
import { Deliverer } from './deliverer';

// Schedules of due markers (deliverer.ts `later`) that must not leave a delivery pending with nothing to work it.
//
// Two webhooks replicas working the same delivery at once (a job handed out again after a lost ack or a crash
// between `schedule` and `ack`): replica A makes attempt 3 and schedules the marker for attempt 4; replica B, whose
// own circuit for the instance is open, read the delivery before A's attempt and puts it off with a marker for
// attempt 3. A schedule is last-writer-wins per stream, so without the record's version on it B's stale marker
// replaced A's.

const ID = instanceIdFor('acme', 'stale-schedule');
const FAILING_ID = instanceIdFor('acme', 'schedule-failure');

/** One replica's view of the shared store: its own durable, taking only the jobs `mine` accepts (the rest acked). */
const replicaView = (
  inner: EventStore,
  replica: string,
  mine: (job: StoreDelivery) => boolean,
  hooks: {
    readStream?: (stream: string) => void;
    append?: (stream: string) => Promise<void>;
    scheduled?: () => Promise<void> | void;
    beforeSchedule?: () => Promise<void>;
  },
): EventStore => ({
  append: async (stream, events, options) => {
    await hooks.append?.(stream);
    return inner.append(stream, events, options);
  },
  schedule: async (stream, events, at, expected) => {
    await hooks.beforeSchedule?.();
    await inner.schedule(stream, events, at, expected);
    await hooks.scheduled?.();
  },
  schedules: true,
  version: (s) => inner.version(s),
  readStream: async (stream, after) => {
    const commits = await inner.readStream(stream, after);
    hooks.readStream?.(stream);
    return commits;
  },
  readPattern: (p, f, l) => inner.readPattern(p, f, l),
  scanPattern: (p, f) => inner.scanPattern(p, f),
  subscribe: async (pattern, options) => {
    const sub = await inner.subscribe(pattern, { ...options, durableName: `${options?.durableName}-${replica}` });
    const filtered: Subscription = {
      async *[Symbol.asyncIterator]() {
        for await (const job of sub) {
          if (mine(job)) yield job;
          else job.ack();
        }
      },
      close: () => sub.close(),
    };
    return filtered;
  },
});

describe('Deliverer: a stale schedule must not replace a newer one', () => {
  const receiver = new WebhookReceiver();
  const client = createDeliveryClient({ timeoutMs: 2_000, allowPrivateNetworks: true });
  beforeAll(() => receiver.start());
  afterAll(async () => {
    await client.close();
    await receiver.stop();
  });

  it('keeps the delivery worked on when two replicas handle it at once and one of them defers it', async () => {
    const store = new InMemoryEventStore();
    const path = '/stale';
    const append = (stream: string, events: NewEvent[], commandId: string) => store.append(stream, events, { expectedVersion: 'any', commandId });
    const at = new Date().toISOString();
    await append(instanceStream(ID), [instanceEvent('InstanceCreated', at, { instance_id: ID, account: 'acme' })], 'i1');
    await append(instanceStream(ID), [instanceEvent('WebhookConfigured', at, { url: receiver.url(path), enabled: true })], 'i2');
    const secrets = new InMemoryWebhookSecretStore();
    receiver.secret(path, await secrets.getOrCreate(ID));
    const endpoints = new EndpointDirectory(store, testLogger());
    endpoints.start();
    await endpoints.reach(ID, 2_000);

    // The delivery after two failed attempts; attempt 3 is due now. Its marker was handed to both replicas.
    const stream = deliveryStream(ID, 'evt_7_0');
    const body = JSON.stringify({ id: 'evt_7_0', type: 'message.sent', instance_id: ID, timestamp: at, data: {} });
    const attempted = (attempt: number) =>
      deliveryEvent('DeliveryAttempted', at, {
        attempt,
        url: receiver.url(path),
        outcome: 'retry',
        status: 500,
        error: null,
        duration_ms: 1,
        next_attempt_in_ms: 0,
        worker: 'w0',
      });
    await append(
      stream,
      [deliveryEvent('DeliveryScheduled', at, { delivery_id: 'evt_7_0', instance_id: ID, event_type: 'message.sent', body }), attempted(1)],
      'd1',
    );
    await append(stream, [attempted(2)], 'd2');
    await append(dueStream(stream), [deliveryDue(at, { round: 0, attempt: 3, deferrals: 0 })], 'due-to-A');
    await append(dueStream(stream), [deliveryDue(at, { round: 0, attempt: 3, deferrals: 0 })], 'due-to-B');
    receiver.script(path, { status: 500 });

    let bRead!: () => void;
    const bHasRead = new Promise<void>((r) => (bRead = r));
    let aScheduled!: () => void;
    const aHasScheduled = new Promise<void>((r) => (aScheduled = r));
    // A: its circuit closed; attempt 4 is due 300 ms after attempt 3. It appends once B has read the delivery.
    const viewA = replicaView(store, 'a', (j) => j.commit.stream.endsWith('.due') && j.commit.commandId !== 'due-to-B', {
      append: (s) => (s === stream ? bHasRead : Promise.resolve()),
      scheduled: () => aScheduled(),
    });
    // B: its circuit for the instance is open; it is slower (e.g. its directory catching up) and schedules after A.
    const viewB = replicaView(store, 'b', (j) => j.commit.commandId === 'due-to-B', {
      readStream: (s) => s === stream && bRead(),
      beforeSchedule: () => aHasScheduled,
    });
    const replica = (view: EventStore, worker: string, breaker: CircuitBreaker) =>
      new Deliverer(
        view,
        view,
        endpoints,
        new Attempter(secrets, client, breaker, { schedule: [0, 0, 0, 300, 300], random: () => 0.5 }, worker, () => new Date()),
        breaker,
        testLogger(),
        {
          random: () => 0,
          concurrency: 4,
          batch: 16,
          ackWaitMs: 60_000,
          now: () => new Date(),
          holdUpToMs: 0,
        },
      );
    const openB = new CircuitBreaker(1, 30_000);
    openB.record(ID, false);
    const a = replica(viewA, 'a', new CircuitBreaker(50, 30_000));
    const b = replica(viewB, 'b', openB);
    await a.start();
    await b.start();
    try {
      // Attempt 4 is due 300 ms after attempt 3.
      const deadline = Date.now() + 5_000;
      let attempts = 0;
      while (Date.now() < deadline && attempts < 4) {
        await sleep(250);
        attempts = (await store.readStream(stream)).flatMap((c) => c.events).filter((e) => e.type === 'DeliveryAttempted').length;
      }
      const markers = (await store.readStream(dueStream(stream))).map((c) => c.events[0]!.data);
      // Before: attempt 3 made, A's marker for attempt 4 replaced by B's for attempt 3 (due in 30 s, then acked as stale).
      expect({ attempts, markers }).toEqual({ attempts: 4, markers: expect.arrayContaining([expect.objectContaining({ attempt: 4 })]) });
    } finally {
      await a.stop();
      await b.stop();
      await endpoints.stop();
    }
  }, 20_000);
});

// A schedule that fails (NATS away a moment) right after an attempt made from a due marker: the marker comes back and
// must be worked again, not taken for stale.
it('makes the next attempt though scheduling it failed once after a marker-driven attempt', async () => {
  const receiver = new WebhookReceiver();
  await receiver.start();
  const client = createDeliveryClient({ timeoutMs: 2_000, allowPrivateNetworks: true });
  const store = new InMemoryEventStore();
  const url = receiver.url('/h');
  const at = new Date().toISOString();
  const add = (s: string, events: Parameters<EventStore['append']>[1], id: string) => store.append(s, events, { expectedVersion: 'any', commandId: id });
  await add(instanceStream(FAILING_ID), [instanceEvent('InstanceCreated', at, { instance_id: FAILING_ID, account: 'acme' })], 'i1');
  await add(instanceStream(FAILING_ID), [instanceEvent('WebhookConfigured', at, { url, enabled: true })], 'i2');
  const secrets = new InMemoryWebhookSecretStore();
  receiver.secret('/h', await secrets.getOrCreate(FAILING_ID));
  const endpoints = new EndpointDirectory(store, testLogger());
  endpoints.start();
  await endpoints.reach(FAILING_ID, 2_000);
  const stream = deliveryStream(FAILING_ID, 'evt_9_0');
  const body = JSON.stringify({ id: 'evt_9_0', type: 'message.sent', instance_id: FAILING_ID, timestamp: at, data: {} });
  await add(
    stream,
    [
      deliveryEvent('DeliveryScheduled', at, { delivery_id: 'evt_9_0', instance_id: FAILING_ID, event_type: 'message.sent', body }),
      deliveryEvent('DeliveryAttempted', at, {
        attempt: 1,
        url,
        outcome: 'retry',
        status: 500,
        error: null,
        duration_ms: 1,
        next_attempt_in_ms: 0,
        worker: 'w0',
      }),
    ],
    'd1',
  );
  receiver.script('/h', { status: 503 }, { status: 503 }); // attempts 2 and 3 fail, 4 succeeds
  let calls = 0;
  // NATS unavailable for a moment right after attempt 3 (made from a due marker) was recorded.
  const flaky: EventStore = Object.assign(Object.create(store) as EventStore, {
    schedule: async (...args: Parameters<EventStore['schedule']>) => {
      if (++calls === 2) throw unavailable('event_store_unavailable', 'NATS unreachable');
      return store.schedule(...args);
    },
  });
  const breaker = new CircuitBreaker(50, 30_000);
  const attempter = new Attempter(secrets, client, breaker, { schedule: [0, 0, 200, 200, 200], random: () => 0.5 }, 'w1', () => new Date());
  const deliverer = new Deliverer(flaky, flaky, endpoints, attempter, breaker, testLogger(), {
    random: () => 0.5,
    concurrency: 4,
    batch: 16,
    ackWaitMs: 10_000,
    now: () => new Date(),
    holdUpToMs: 0,
  });
  await deliverer.start();
  try {
    await sleep(5_000); // attempt 4 due 200 ms after attempt 3; the job put back returns after 2 s
    const types = (await store.readStream(stream)).flatMap((c) => c.events.map((e) => e.type));
    expect(types.filter((t) => t === 'DeliveryAttempted')).toHaveLength(4);
  } finally {
    await deliverer.stop();
    await endpoints.stop();
    await client.close();
    await receiver.stop();
  }
}, 20_000);
