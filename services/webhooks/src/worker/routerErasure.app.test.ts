import { instanceIdFor, messageEvent, messageStream, type Commit, type SealedEventStore } from '@wagw/lib';
import { type GatedClient } from '../../../../test/harness/gatedClient';
import { eventually } from '../../../../test/harness/wait';
import { gatedRig, sealedStore } from '../../../../test/harness/webhooksWorkerRig';
import { deliveredStream, deliveryStream } from '../delivery/events';
import { type EndpointDirectory } from '../endpoints/endpointDirectory';
import { toWebhookEvent } from '../routing/webhookEvent';
import { type Attempter } from './attempter';
import { type CircuitBreaker } from './circuitBreaker';
import { firstAttempt } from './firstAttempt';

// Application tests of first attempts around an erasure: the real router, first-attempt path, attempter and endpoint
// directory on one in-memory store with content sealed (as in production: a record written after the erasure is
// sealed under the instance's new key), and a delivery client whose answers the test holds back. Given messages read
// (opened) before erase_instance_data, when their first attempts come after it, then what was POSTed and recorded.

const ID = instanceIdFor('acme', 'router-erase');
const URL = 'https://hooks.example/erase';
const EARLIER = new Date(Date.now() - 60_000).toISOString();

describe('first attempts around an erasure (application, sealed in-memory store)', () => {
  const rig = gatedRig({ instanceId: ID, store: sealedStore, url: URL, at: EARLIER, schedule: [0, 20], threshold: 50 });
  const { append, erase, stored } = rig;
  let store: SealedEventStore;
  let endpoints: EndpointDirectory;
  let client: GatedClient;
  let attempter: Attempter;
  let breaker: CircuitBreaker;

  beforeEach(() => {
    ({ store, endpoints, client } = rig);
    ({ attempter, breaker } = rig.attemptParts());
  });

  /** The rig's router, on this test's attempter and breaker (the ones a replay's first attempt uses too). */
  const routerWith = () => rig.routerWith({ concurrency: 4 }, { parts: { attempter, breaker } });
  /** A text received (at `at`), read back as the router gets it: opened, in the clear. */
  const received = async (n: number, at = EARLIER): Promise<Commit> => {
    const text = `SECRET-${n}`;
    const data = { message_id: `in_${n}`, from: '4915100000001', push_name: 'Ann', text, media: null, timestamp: at };
    const { version } = await append(messageStream(ID, `in_${n}`), messageEvent('MessageReceived', at, data));
    return (await store.readPattern('>', version, 1)).commits[0]!;
  };
  /** Everything the store gives back now, as one text: erased content must not be in it. */
  const everything = async (): Promise<string> => JSON.stringify((await store.readPattern('>', 1, 1_000)).commits);

  it('sends nothing of what waited in the lane when the erasure came, records it dropped, and keeps no content in the records', async () => {
    const [one, two] = [await received(1), await received(2)];
    const router = routerWith();
    // The first text's attempt is in flight (its endpoint has not answered), the second waits behind it, opened.
    client.auto = null;
    const answers: string[] = [];
    for (const commit of [one, two]) {
      router.handle(ID, { commit, deliveryCount: 1, ack: () => void answers.push('ack'), nak: () => void answers.push('nak'), inProgress: () => undefined });
    }
    await eventually(
      async () => client.posted.length,
      (n) => n === 1,
      2_000,
    );
    await erase();
    client.answer({ kind: 'retry', status: 500, durationMs: 700 });
    await router.idle();

    expect(answers).toEqual(['ack', 'ack']);
    expect(client.posted).toHaveLength(1);
    expect(await stored(deliveryStream(ID, `evt_${two.sequence}_0`))).toEqual([
      { type: 'DeliveryScheduled', data: expect.objectContaining({ event_type: 'message.received', body: null, erased: true }) },
      { type: 'DeliveryDropped', data: { reason: 'content_erased' } },
    ]);
    // The in-flight attempt's record came after the erasure: sealed under the instance's new key, its payload would
    // read in the clear again; it is recorded without it, so the deliverer drops its retry.
    expect(await stored(deliveryStream(ID, `evt_${one.sequence}_0`))).toMatchObject([
      { type: 'DeliveryScheduled', data: { body: null, erased: true } },
      { type: 'DeliveryAttempted', data: { outcome: 'retry', status: 500 } },
    ]);
    expect(await everything()).not.toContain('SECRET');
  });

  it('sends and records the delivery of a message received after the erasure as usual', async () => {
    await erase();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const later = await received(3, new Date().toISOString());
    const router = routerWith();
    router.handle(ID, { commit: later, deliveryCount: 1, ack: () => undefined, nak: () => undefined, inProgress: () => undefined });
    await router.idle();
    expect(client.posted.map((b) => (JSON.parse(b) as { data: { text: string } }).data.text)).toEqual(['SECRET-3']);
    expect(await stored(deliveredStream(ID, `evt_${later.sequence}_0`))).toMatchObject([{ type: 'DeliveryScheduled' }, { type: 'DeliveryAttempted' }]);
  });

  it('replays a message opened before the erasure as erased history reads it: content null, erased: true, in the POST and the record', async () => {
    const commit = await received(4);
    const webhook = toWebhookEvent(commit, 0, commit.events[0]!)!;
    expect(webhook.data.text).toBe('SECRET-4');
    await erase();
    const deps = { events: store, deliveries: store, attempter, breaker, erasure: endpoints, settings: endpoints };
    const target = { deliveryId: `rpl_1_${webhook.id}`, replayOf: webhook.id, redelivered: false };
    await firstAttempt(deps, ID, webhook, URL, target);

    expect(client.posted).toHaveLength(1);
    expect(JSON.parse(client.posted[0]!)).toMatchObject({ id: webhook.id, type: 'message.received', data: { text: null, push_name: null, erased: true } });
    expect(await everything()).not.toContain('SECRET');
  });
});
