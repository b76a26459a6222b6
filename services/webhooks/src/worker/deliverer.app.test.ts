import { instanceEvent, instanceIdFor, instanceStream, type ContentKeys, type EventStore, type SealedEventStore } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { receiverRig, sealedStore } from '../../../../test/harness/webhooksWorkerRig';
import { deliveryEvent, deliveryStream, dueStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { type Deliverer } from './deliverer';

// Application tests of retries, dead letters and redelivery: the real deliverer (on its durable subscription),
// attempter, endpoint directory and delivery client on one in-memory store (payloads sealed, as in production), delivering to a real HTTP receiver on
// 127.0.0.1. Given a delivery job as the router leaves it, when the deliverer works it, then the attempts it records.

const ID = instanceIdFor('acme', 'deliverer-1');
/** Attempts 1, 2 and 3 at once, 20 ms and 40 ms after the previous one: the whole schedule within a test. */
const SCHEDULE = [0, 20, 40];

describe('Deliverer (application, in-memory store, real HTTP receiver)', () => {
  const rig = receiverRig({ instanceId: ID, store: sealedStore, pathPrefix: '/hook', schedule: SCHEDULE, threshold: 50 });
  const { receiver, append } = rig;
  let keys: ContentKeys;
  let store: SealedEventStore;
  let endpoints: EndpointDirectory;
  let deliverer: Deliverer;
  let path = '';

  beforeEach(() => {
    ({ keys, store, endpoints, path } = rig);
    deliverer = delivererWith(endpoints);
  });

  /** A deliverer with 8 lanes (stopped after the test), on `directory`, recording in `deliveries`. */
  const delivererWith = (directory: EndpointDirectory, holdUpToMs?: number, deliveries: EventStore = store): Deliverer =>
    rig.delivererWith({ concurrency: 8, ...(holdUpToMs === undefined ? {} : { holdUpToMs }) }, { endpoints: directory, deliveries });
  const givenInstance = async (enabled = true): Promise<void> => {
    await rig.givenInstance(new Date().toISOString(), enabled);
    await endpoints.reach(ID, 2_000);
  };
  /** A job as the router leaves it after a first attempt that got a 500: its second attempt due `dueInMs` after it. */
  const failedFirstAttempt = async (deliveryId: string, dueInMs = SCHEDULE[1]!, type = 'message.sent'): Promise<void> => {
    const at = new Date().toISOString();
    const body = JSON.stringify({ id: deliveryId, type, instance_id: ID, timestamp: at, data: { message_id: 'm1' } });
    await append(
      deliveryStream(ID, deliveryId),
      deliveryEvent('DeliveryScheduled', at, { delivery_id: deliveryId, instance_id: ID, event_type: type, body }),
      deliveryEvent('DeliveryAttempted', at, {
        attempt: 1,
        url: receiver.url(path),
        outcome: 'retry',
        status: 500,
        error: null,
        duration_ms: 3,
        next_attempt_in_ms: dueInMs,
        worker: 'w0',
      }),
    );
  };
  const types = async (deliveryId: string): Promise<string[]> =>
    (await store.readStream(deliveryStream(ID, deliveryId))).flatMap((c) => c.events.map((e) => e.type));
  const attemptsOf = async (deliveryId: string) =>
    (await store.readStream(deliveryStream(ID, deliveryId))).flatMap((c) => c.events.filter((e) => e.type === 'DeliveryAttempted').map((e) => e.data));

  it('waits for an endpoint directory that lags the instance (a replica just started) instead of dropping the retry for good', async () => {
    await givenInstance();
    await failedFirstAttempt('evt_lag');
    // This replica's directory has folded nothing yet when the retry comes: the webhook looks off.
    const lagging = new EndpointDirectory(store, testLogger());
    const late = delivererWith(lagging);
    await late.start();
    setTimeout(() => lagging.start(), 300);
    try {
      const attempts = await eventually(
        () => attemptsOf('evt_lag'),
        (a) => a.length === 2,
        5_000,
      );
      expect(attempts[1]).toMatchObject({ attempt: 2, outcome: 'delivered', status: 200 });
      expect(await types('evt_lag')).not.toContain('DeliveryDropped');
    } finally {
      await late.stop();
      await lagging.stop();
    }
  });

  it('makes the next attempt when it is due and records the delivery', async () => {
    await givenInstance();
    await failedFirstAttempt('evt_1_0');
    await deliverer.start();
    const attempts = await eventually(
      () => attemptsOf('evt_1_0'),
      (a) => a.length === 2,
      5_000,
    );
    expect(attempts[1]).toMatchObject({ attempt: 2, outcome: 'delivered', status: 200, worker: 'w1' });
    const got = receiver.received.filter((r) => r.path === path);
    expect(got.map((r) => r.id)).toEqual(['evt_1_0']); // the same webhook-id as the first attempt
  });

  it('dead-letters a delivery once the schedule is used up', async () => {
    await givenInstance();
    receiver.script(path, { status: 503 }, { status: 503 });
    await failedFirstAttempt('evt_2_0');
    await deliverer.start();
    const recorded = await eventually(
      () => types('evt_2_0'),
      (t) => t.includes('DeliveryDeadLettered'),
      5_000,
    );
    expect(recorded).toEqual(['DeliveryScheduled', 'DeliveryAttempted', 'DeliveryAttempted', 'DeliveryAttempted', 'DeliveryDeadLettered']);
  });

  it('works the schedule through due markers when its waits are long, and keeps them off the delivery record', async () => {
    await givenInstance();
    receiver.script(path, { status: 503 }, { status: 503 });
    await failedFirstAttempt('evt_8_0');
    // Every wait counts as long here: each one is a scheduled marker, none a job put back.
    const scheduling = delivererWith(endpoints, 0);
    await scheduling.start();
    try {
      const recorded = await eventually(
        () => types('evt_8_0'),
        (t) => t.includes('DeliveryDeadLettered'),
        5_000,
      );
      expect(recorded).toEqual(['DeliveryScheduled', 'DeliveryAttempted', 'DeliveryAttempted', 'DeliveryAttempted', 'DeliveryDeadLettered']);
      const markers = (await store.readStream(dueStream(deliveryStream(ID, 'evt_8_0')))).flatMap((c) => c.events.map((e) => e.data));
      expect(markers).toEqual([
        { round: 0, attempt: 2, deferrals: 0 },
        { round: 0, attempt: 3, deferrals: 0 },
      ]);
      expect(receiver.received.filter((r) => r.path === path)).toHaveLength(2);
    } finally {
      await scheduling.stop();
    }
  });

  it('puts jobs back instead on a store that keeps no schedules (a nats-server before 2.12), and works the schedule all the same', async () => {
    await givenInstance();
    receiver.script(path, { status: 503 }, { status: 503 });
    await failedFirstAttempt('evt_9_0');
    const noSchedules: EventStore = Object.create(store, {
      schedules: { value: false },
      schedule: { value: () => Promise.reject(new Error('this store keeps no schedules')) },
    }) as EventStore;
    const holding = delivererWith(endpoints, 0, noSchedules);
    await holding.start();
    try {
      const recorded = await eventually(
        () => types('evt_9_0'),
        (t) => t.includes('DeliveryDeadLettered'),
        1_500,
      );
      expect(recorded).toEqual(['DeliveryScheduled', 'DeliveryAttempted', 'DeliveryAttempted', 'DeliveryAttempted', 'DeliveryDeadLettered']);
      expect(await store.readStream(dueStream(deliveryStream(ID, 'evt_9_0')))).toEqual([]);
    } finally {
      await holding.stop();
    }
  });

  it('drops a pending delivery once the webhook is switched off, sending nothing', async () => {
    await givenInstance(false);
    await failedFirstAttempt('evt_3_0');
    await deliverer.start();
    expect(
      await eventually(
        () => types('evt_3_0'),
        (t) => t.includes('DeliveryDropped'),
        5_000,
      ),
    ).toEqual(['DeliveryScheduled', 'DeliveryAttempted', 'DeliveryDropped']);
    expect(receiver.received.filter((r) => r.path === path)).toEqual([]);
  });

  it('delivers a dead-lettered event again when a redelivery is requested', async () => {
    await givenInstance();
    receiver.script(path, { status: 500 }, { status: 500 });
    await failedFirstAttempt('evt_4_0');
    await deliverer.start();
    await eventually(
      () => types('evt_4_0'),
      (t) => t.includes('DeliveryDeadLettered'),
      5_000,
    );
    await append(deliveryStream(ID, 'evt_4_0'), deliveryEvent('RedeliveryRequested', new Date().toISOString(), { round: 1 }));
    const attempts = await eventually(
      () => attemptsOf('evt_4_0'),
      (a) => a.some((x) => x.outcome === 'delivered'),
      5_000,
    );
    expect(attempts.at(-1)).toMatchObject({ outcome: 'delivered', status: 200 });
  });

  it('drops a pending retry of a payload with content as content_erased once the instance was erased; one without content goes on', async () => {
    await givenInstance();
    await failedFirstAttempt('evt_5_0', 300, 'message.received');
    await failedFirstAttempt('evt_6_0', 300, 'message.sent');
    await keys.destroy(ID);
    await append(instanceStream(ID), instanceEvent('InstanceDataErased', new Date().toISOString(), {}));
    await endpoints.reach(ID, 2_000);
    await deliverer.start();
    const dropped = await eventually(
      async () =>
        (await store.readStream(deliveryStream(ID, 'evt_5_0'))).flatMap((c) => c.events.filter((e) => e.type === 'DeliveryDropped').map((e) => e.data)),
      (d) => d.length === 1,
      5_000,
    );
    expect(dropped).toEqual([{ reason: 'content_erased' }]);
    const got = await eventually(
      async () => receiver.received.filter((r) => r.path === path),
      (r) => r.length === 1,
      5_000,
    );
    expect(got.map((r) => r.id)).toEqual(['evt_6_0']);
  });

  it('drops a retry with content as content_erased when the erasure comes while the retry waits (its state was read before)', async () => {
    await givenInstance();
    // The second attempt fails too, and asks for a second's wait: the deliverer keeps the delivery's state meanwhile.
    receiver.script(path, { status: 503, headers: { 'retry-after': '1' } });
    await failedFirstAttempt('evt_7_0', 0, 'message.received');
    await deliverer.start();
    await eventually(
      () => attemptsOf('evt_7_0'),
      (a) => a.length === 2,
      5_000,
    );
    await keys.destroy(ID);
    await append(instanceStream(ID), instanceEvent('InstanceDataErased', new Date().toISOString(), {}));
    await endpoints.reach(ID, 2_000);
    const dropped = await eventually(
      async () =>
        (await store.readStream(deliveryStream(ID, 'evt_7_0'))).flatMap((c) => c.events.filter((e) => e.type === 'DeliveryDropped').map((e) => e.data)),
      (d) => d.length === 1,
      5_000,
    );
    expect(dropped).toEqual([{ reason: 'content_erased' }]);
    // Only the attempt before the erasure reached the receiver.
    expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1);
  });
});
