import { instanceEvent, instanceIdFor, instanceStream, messageEvent, messageStream, type Commit, type Delivery } from '@wagw/lib';
import { LaggingStore } from '../../../../test/harness/laggingStore';
import { testLogger } from '../../../../test/harness/logger';
import { type Reply } from '../../../../test/harness/webhookReceiver';
import { receiverRig } from '../../../../test/harness/webhooksWorkerRig';
import { deliveredStream, deliveryStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { type Router } from './router';

// Application tests of the first attempt: the real router, attempter, endpoint directory and delivery client on one
// in-memory store (instance events and delivery records), delivering to a real HTTP receiver on 127.0.0.1 that checks
// every Standard Webhooks signature. Given the instance's events, when the router takes a domain event, then the
// records it stored, what the receiver got and whether the event was acknowledged.

const ID = instanceIdFor('acme', 'router-1');
const AT = '2026-11-23T10:00:00.000Z';

describe('Router (application, in-memory store, real HTTP receiver)', () => {
  const rig = receiverRig({ instanceId: ID, store: () => new LaggingStore(), pathPrefix: '/hook' });
  const { receiver, append, stored } = rig;
  let store: LaggingStore;
  let endpoints: EndpointDirectory;
  let router: Router;
  let path = '';

  beforeEach(() => {
    ({ store, endpoints, path } = rig);
    router = rig.routerWith();
  });

  /** The instance with its webhook at the receiver (`enabled` as given), its secret known to the receiver. */
  const givenInstance = (enabled = true): Promise<void> => rig.givenInstance(AT, enabled);
  const inbound = () =>
    append(
      messageStream(ID, 'in_1'),
      messageEvent('MessageReceived', AT, { message_id: 'in_1', from: '4915100000001', push_name: 'Ann', text: 'hi', media: null, timestamp: AT }),
    );

  /** Hands the commit at `sequence` to the router as the sequencer does (its delivery `count`), and waits for it. */
  const route = async (sequence: number, count = 1): Promise<{ acked: boolean; naked: boolean }> => {
    const [commit] = (await store.readPattern('>', sequence, 1)).commits as [Commit];
    const outcome = { acked: false, naked: false };
    const delivery: Delivery = {
      commit,
      deliveryCount: count,
      ack: () => void (outcome.acked = true),
      nak: () => void (outcome.naked = true),
      inProgress: () => undefined,
    };
    router.handle(ID, delivery);
    await router.idle();
    return outcome;
  };
  const reply = (...replies: Reply[]) => receiver.script(path, ...replies);

  it('delivers a received message signed, records it as delivered, and acknowledges the event', async () => {
    await givenInstance();
    const { version } = await inbound();
    expect(await route(version)).toEqual({ acked: true, naked: false });
    const got = receiver.received.filter((r) => r.path === path);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ id: `evt_${version}_0`, body: { type: 'message.received', instance_id: ID, data: { message_id: 'in_1', text: 'hi' } } });
    expect(await stored(deliveredStream(ID, `evt_${version}_0`))).toMatchObject([
      { type: 'DeliveryScheduled', data: { delivery_id: `evt_${version}_0`, event_type: 'message.received' } },
      { type: 'DeliveryAttempted', data: { attempt: 1, outcome: 'delivered', status: 200, worker: 'w1' } },
    ]);
    expect(receiver.rejected).toEqual([]);
  });

  it('leaves a failed first attempt as a job for the deliverer, with its next attempt planned', async () => {
    await givenInstance();
    reply({ status: 500 });
    const { version } = await inbound();
    expect(await route(version)).toEqual({ acked: true, naked: false });
    expect(await stored(deliveryStream(ID, `evt_${version}_0`))).toMatchObject([
      { type: 'DeliveryScheduled' },
      { type: 'DeliveryAttempted', data: { attempt: 1, outcome: 'retry', status: 500, next_attempt_in_ms: expect.any(Number) } },
    ]);
    expect(await stored(deliveredStream(ID, `evt_${version}_0`))).toEqual([]);
  });

  it('switches the webhook off (a decision of the instance) when the endpoint answers 410 Gone', async () => {
    await givenInstance();
    reply({ status: 410 });
    const { version } = await inbound();
    await route(version);
    expect((await stored(instanceStream(ID))).map((e) => e.type)).toEqual(['InstanceCreated', 'WebhookConfigured', 'WebhookDisabled']);
    await endpoints.reach(ID, 2_000);
    expect(endpoints.get(ID)).toMatchObject({ enabled: false });
    expect(await stored(deliveryStream(ID, `evt_${version}_0`))).toMatchObject([
      { type: 'DeliveryScheduled' },
      { type: 'DeliveryAttempted', data: { outcome: 'gone' } },
      { type: 'DeliveryDeadLettered' },
    ]);
  });

  it("sends none of the instance's next events once its endpoint answered 410, though the directory folds the switch-off late", async () => {
    await givenInstance();
    reply({ status: 410 });
    const first = await inbound();
    const { version: next } = await append(
      messageStream(ID, 'in_2'),
      messageEvent('MessageReceived', AT, { message_id: 'in_2', from: '4915100000001', push_name: 'Ann', text: 'next', media: null, timestamp: AT }),
    );
    // Over NATS the directory folds the WebhookDisabled a moment after it is stored: 30 ms here.
    store.delayMs = 30;
    const commits = (await store.readPattern('>', first.version, 2)).commits;
    const answers: string[] = [];
    rig.handOut(router, commits, answers);
    await router.idle();
    expect(answers).toEqual([`ack ${first.version}`, `ack ${next}`]);
    expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1);
    expect(await stored(deliveryStream(ID, `evt_${next}_0`))).toMatchObject([
      { type: 'DeliveryScheduled' },
      { type: 'DeliveryDropped', data: { reason: 'webhook disabled' } },
    ]);
  });

  it('sends nothing and records nothing while the webhook is off, and acknowledges the event', async () => {
    await givenInstance(false);
    const { version } = await inbound();
    expect(await route(version)).toEqual({ acked: true, naked: false });
    expect(receiver.received.filter((r) => r.path === path)).toEqual([]);
    expect(await stored(deliveryStream(ID, `evt_${version}_0`))).toEqual([]);
  });

  it('records as dropped (webhook disabled), not sent, an event raised while the webhook was on whose turn came after it went off', async () => {
    await givenInstance();
    const before = await inbound();
    await append(instanceStream(ID), instanceEvent('WebhookConfigured', AT, { url: receiver.url(path), enabled: false }));
    const { version: after } = await append(
      messageStream(ID, 'in_2'),
      messageEvent('MessageReceived', AT, { message_id: 'in_2', from: '4915100000001', push_name: 'Ann', text: 'off', media: null, timestamp: AT }),
    );
    await endpoints.reach(ID, 2_000);
    expect(await route(before.version)).toEqual({ acked: true, naked: false });
    expect(await route(after)).toEqual({ acked: true, naked: false });
    expect(receiver.received.filter((r) => r.path === path)).toEqual([]);
    // So webhook_deliveries?status=dropped shows what a replay has to send; the event raised while off is not listed.
    expect(await stored(deliveryStream(ID, `evt_${before.version}_0`))).toMatchObject([
      { type: 'DeliveryScheduled', data: { delivery_id: `evt_${before.version}_0`, event_type: 'message.received' } },
      { type: 'DeliveryDropped', data: { reason: 'webhook disabled' } },
    ]);
    expect(await stored(deliveryStream(ID, `evt_${after}_0`))).toEqual([]);
  });

  it('records no drop for an event raised while on whose type the webhook filters out', async () => {
    await givenInstance();
    await append(instanceStream(ID), instanceEvent('WebhookConfigured', AT, { url: receiver.url(path), enabled: true, events: ['message.sent'] }));
    const { version } = await inbound();
    await append(instanceStream(ID), instanceEvent('WebhookDisabled', AT, { reason: 'gone' }));
    await endpoints.reach(ID, 2_000);
    expect(await route(version)).toEqual({ acked: true, naked: false });
    expect(await stored(deliveryStream(ID, `evt_${version}_0`))).toEqual([]);
  });

  it('does not deliver again an event redelivered after a crash when its record exists', async () => {
    await givenInstance();
    const { version } = await inbound();
    await route(version);
    expect(await route(version, 2)).toEqual({ acked: true, naked: false });
    expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1);
  });

  it('answers the copies of an event still in its lane together with it: worked once, taking no place in the lane', async () => {
    await givenInstance();
    reply('hang');
    const first = await inbound();
    await append(
      messageStream(ID, 'in_2'),
      messageEvent('MessageReceived', AT, { message_id: 'in_2', from: '4915100000001', push_name: 'Ann', text: 'then', media: null, timestamp: AT }),
    );
    const [before, commit] = (await store.readPattern('>', first.version, 2)).commits as [Commit, Commit];
    const answers: string[] = [];
    const handOut = (c: Commit, name: string, count: number): void =>
      router.handle(ID, {
        commit: c,
        deliveryCount: count,
        ack: () => void answers.push(`${name} ack`),
        nak: () => void answers.push(`${name} nak`),
        inProgress: () => undefined,
      });
    handOut(before, 'first', 1);
    // The second event waits behind the first (whose endpoint hangs until the 2 s time-out). The sequencer forwards a
    // copy each time an answer is late: more than a lane holds (1,000) must not push anything out.
    handOut(commit, 'second', 1);
    for (let i = 0; i < 1_200; i++) handOut(commit, 'copy', 2);
    await router.idle();
    expect(answers.filter((a) => a.endsWith('nak'))).toEqual([]);
    expect(answers.slice(0, 2)).toEqual(['first ack', 'second ack']);
    expect(answers.filter((a) => a === 'copy ack')).toHaveLength(1_200);
    expect(receiver.received.filter((r) => r.path === path && r.body.data.message_id === 'in_2')).toHaveLength(1);
  });

  it("keeps an instance's events in order while a just-started replica's directory cannot yet tell its settings", async () => {
    await givenInstance();
    const first = await inbound();
    await append(
      messageStream(ID, 'in_2'),
      messageEvent('MessageReceived', AT, { message_id: 'in_2', from: '4915100000001', push_name: 'Ann', text: 'then', media: null, timestamp: AT }),
    );
    const [one, two] = (await store.readPattern('>', first.version, 2)).commits as [Commit, Commit];
    // This replica's directory starts folding only after the first confirmation has timed out once.
    const lagging = new EndpointDirectory(store, testLogger());
    const late = rig.routerWith({ confirmWithinMs: 200 }, { endpoints: lagging, parts: rig.attemptParts([0, 5_000]) });
    const answers: string[] = [];
    for (const commit of [one, two]) {
      late.handle(ID, {
        commit,
        deliveryCount: 1,
        ack: () => void answers.push(`ack ${commit.sequence}`),
        nak: () => void answers.push(`nak ${commit.sequence}`),
        inProgress: () => undefined,
      });
    }
    setTimeout(() => lagging.start(), 300);
    try {
      await late.idle();
      expect(answers).toEqual([`ack ${one.sequence}`, `ack ${two.sequence}`]);
      expect(receiver.received.filter((r) => r.path === path).map((r) => r.body.data.message_id)).toEqual(['in_1', 'in_2']);
    } finally {
      await lagging.stop();
    }
  });

  it('ignores events receivers are not told about (a QR code was issued)', async () => {
    await givenInstance();
    const { version } = await append(instanceStream(ID), instanceEvent('InstanceQrIssued', AT, {}));
    expect(await route(version)).toEqual({ acked: true, naked: false });
    expect(receiver.received.filter((r) => r.path === path)).toEqual([]);
  });
});
