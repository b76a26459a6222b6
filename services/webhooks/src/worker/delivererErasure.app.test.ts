import { instanceIdFor, type SealedEventStore } from '@wagw/lib';
import { type GatedClient } from '../../../../test/harness/gatedClient';
import { eventually, sleep } from '../../../../test/harness/wait';
import { gatedRig, sealedStore } from '../../../../test/harness/webhooksWorkerRig';
import { deliveryEvent, deliveryStream } from '../delivery/events';
import { type Deliverer } from './deliverer';

// Application tests of retries around an erasure: the real deliverer, attempter and endpoint directory on one
// in-memory store with content sealed (a record written after the erasure is sealed under the instance's new key),
// and a delivery client whose answers the test holds back. Given a delivery of a message received before
// erase_instance_data, when its retry comes after it, then it is dropped (content_erased) and not POSTed.

const ID = instanceIdFor('acme', 'deliverer-erase');
const URL = 'https://hooks.example/erase';
const EARLIER = new Date(Date.now() - 60_000).toISOString();

describe('Deliverer around an erasure (application, sealed in-memory store)', () => {
  const rig = gatedRig({ instanceId: ID, store: sealedStore, url: URL, at: EARLIER, schedule: [0, 20, 20, 20], threshold: 50 });
  const { append, erase } = rig;
  let store: SealedEventStore;
  let client: GatedClient;
  let deliverer: Deliverer;

  beforeEach(() => {
    ({ store, client } = rig);
    deliverer = rig.delivererWith();
  });

  /** A message.received delivery whose first attempt failed, its retry due at once; `data` is the payload's. */
  const failedFirstAttempt = (id: string, data: Record<string, unknown>, replayOf?: string) =>
    append(
      deliveryStream(ID, id),
      deliveryEvent('DeliveryScheduled', EARLIER, {
        delivery_id: id,
        instance_id: ID,
        event_type: 'message.received',
        body: JSON.stringify({ id: replayOf ?? id, type: 'message.received', instance_id: ID, timestamp: EARLIER, data }),
        ...(replayOf ? { replay_of: replayOf } : {}),
      }),
      deliveryEvent('DeliveryAttempted', EARLIER, {
        attempt: 1,
        url: URL,
        outcome: 'retry',
        status: 500,
        error: null,
        duration_ms: 3,
        next_attempt_in_ms: 0,
        worker: 'w0',
      }),
    );
  const dropped = (id: string) =>
    eventually(
      async () => (await store.readStream(deliveryStream(ID, id))).flatMap((c) => c.events.filter((e) => e.type === 'DeliveryDropped').map((e) => e.data)),
      (d) => d.length > 0,
      5_000,
    );

  it('drops a retry recorded after the erasure (sealed under the new key, so it opens) without sending it', async () => {
    await erase();
    // Written now, the payload is sealed under a key made after the erasure: the store reads it in the clear.
    await failedFirstAttempt('evt_1_0', { message_id: 'in_1', text: 'SECRET-1' });
    expect(JSON.stringify(await store.readStream(deliveryStream(ID, 'evt_1_0')))).toContain('SECRET-1');
    await deliverer.start();
    expect(await dropped('evt_1_0')).toEqual([{ reason: 'content_erased' }]);
    expect(client.posted).toEqual([]);
  });

  it('drops the next retry of an attempt that was in flight during the erasure (its opened payload is not sent again)', async () => {
    await failedFirstAttempt('evt_2_0', { message_id: 'in_2', text: 'SECRET-2' });
    client.auto = null;
    await deliverer.start();
    await eventually(
      async () => client.posted.length,
      (n) => n === 1,
      5_000,
    );
    await erase();
    client.answer({ kind: 'retry', status: 500, durationMs: 700 });
    expect(await dropped('evt_2_0')).toEqual([{ reason: 'content_erased' }]);
    await sleep(100);
    expect(client.posted).toHaveLength(1);
  });

  it('retries a replay of erased history (its payload already reads erased: it holds no content)', async () => {
    await erase();
    await failedFirstAttempt('rpl_1_evt_3_0', { message_id: 'in_3', text: null, erased: true }, 'evt_3_0');
    await deliverer.start();
    const posted = await eventually(
      async () => client.posted,
      (p) => p.length === 1,
      5_000,
    );
    expect(JSON.parse(posted[0]!)).toMatchObject({ id: 'evt_3_0', data: { text: null, erased: true } });
  });
});
