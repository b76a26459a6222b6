import { instanceIdFor } from '@wagw/lib';
import { type Reply } from '../../../../test/harness/webhookReceiver';
import { FlakyStore, receiverRig, waitFor } from '../../../../test/harness/webhooksWorkerRig';
import { deliveredStream, deliveryStream } from '../delivery/events';

// Application tests of a lane whose endpoint is slow: the real router, attempter and delivery client on one in-memory
// store whose appends can be made to fail, delivering to a real HTTP receiver on 127.0.0.1 (a `hang` reply accepts the
// request and never answers). Given an instance's events handed to the router in order, then which were acked or
// handed back (in what order), what the receiver got and what was recorded for the deliverer.

const ID = instanceIdFor('acme', 'router-slow');
const AT = '2026-11-23T10:00:00.000Z';
const TIMEOUT_MS = 2_000;

describe('Router with a slow endpoint (application, in-memory store, real HTTP receiver)', () => {
  const rig = receiverRig({ instanceId: ID, store: () => new FlakyStore(), pathPrefix: '/slow', timeoutMs: TIMEOUT_MS });
  const { receiver, routerWith, sent, handOut, stored } = rig;
  let store: FlakyStore;
  let path = '';

  beforeEach(async () => {
    ({ store, path } = rig);
    await rig.givenInstance(AT);
  });

  const hang = (): void => receiver.script(path, ...Array.from<Reply>({ length: 20 }).fill('hang'));

  it('hands an attempt that hangs to the deliverer after slowAfterMs, and records the next events behind it unsent', async () => {
    hang();
    const router = routerWith({ slowAfterMs: 200 });
    const events = await sent(3);
    const answers: string[] = [];
    const began = Date.now();
    handOut(
      router,
      events.map((e) => e.commit),
      answers,
    );
    await waitFor(() => answers.length === 3, 4 * TIMEOUT_MS);
    // Acked in order, well before the attempt's time-out: the lane held them for the 200 ms only.
    expect(answers).toEqual(events.map((e) => `ack ${e.commit.sequence}`));
    expect(Date.now() - began).toBeLessThan(TIMEOUT_MS / 2);
    // The hanging request reaches the receiver in its own time (a CI run found it not there yet when the lane let go).
    await waitFor(() => receiver.on(path).length > 0, TIMEOUT_MS);
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m1']);
    // All wait for the deliverer until the hanging attempt has surely ended (its time-out and a margin).
    const [first] = await stored(deliveryStream(ID, events[0]!.id));
    const notBefore = (first?.data as { not_before?: string }).not_before;
    expect(Date.parse(notBefore ?? '') - began).toBeGreaterThanOrEqual(TIMEOUT_MS);
    for (const { id } of events) expect(await stored(deliveryStream(ID, id))).toMatchObject([{ type: 'DeliveryScheduled', data: { not_before: notBefore } }]);
    // The hanging attempt's outcome is added to its record when it times out.
    await router.idle();
    expect(await stored(deliveryStream(ID, events[0]!.id))).toMatchObject([
      { type: 'DeliveryScheduled' },
      { type: 'DeliveryAttempted', data: { attempt: 1, outcome: 'retry' } },
    ]);
    // An event after it still goes behind those waiting for the deliverer, not out before them from here.
    const [later] = await sent(1, 4);
    handOut(router, [later!.commit], answers);
    await router.idle();
    expect(receiver.on(path)).toHaveLength(1);
    expect(await stored(deliveryStream(ID, later!.id))).toMatchObject([{ type: 'DeliveryScheduled', data: { not_before: notBefore } }]);
  });

  it('hands nothing back for a full lane: the attempt ahead is handed off at once, the events behind it recorded in order', async () => {
    hang();
    const router = routerWith({ maxPerInstance: 3 });
    const events = await sent(6);
    const answers: string[] = [];
    handOut(
      router,
      events.map((e) => e.commit),
      answers,
    );
    await waitFor(() => answers.length === 6, 4 * TIMEOUT_MS);
    expect(answers).toEqual(events.map((e) => `ack ${e.commit.sequence}`));
    // The attempt ahead was handed off at once, maybe before its request reached the receiver: one request, no more.
    await waitFor(() => receiver.on(path).length > 0, TIMEOUT_MS);
    expect(receiver.on(path)).toHaveLength(1);
    for (const { id } of events) expect((await stored(deliveryStream(ID, id)))[0]).toMatchObject({ type: 'DeliveryScheduled' });
    await router.idle();
  });

  it('records an outcome NATS refused for a moment again in the lane: nothing handed back, posted once, in order', async () => {
    const router = routerWith({});
    const events = await sent(2);
    const answers: string[] = [];
    store.failing = 2;
    handOut(
      router,
      events.map((e) => e.commit),
      answers,
    );
    await router.idle();
    expect(answers).toEqual(events.map((e) => `ack ${e.commit.sequence}`));
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m1', 'm2']);
    for (const { id } of events) expect(await stored(deliveredStream(ID, id))).toMatchObject([{ type: 'DeliveryScheduled' }, { type: 'DeliveryAttempted' }]);
  });
});
