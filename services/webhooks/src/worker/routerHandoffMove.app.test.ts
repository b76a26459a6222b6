import { InMemoryEventStore, instanceIdFor } from '@wagw/lib';
import { receiverRig, waitFor, type Sent } from '../../../../test/harness/webhooksWorkerRig';
import { deliveryStream } from '../delivery/events';
import { type Router } from './router';

// An instance whose lane handed an attempt off (its endpoint hangs) moves to another replica, or its replica
// restarts, while the handed-over deliveries wait for the deliverer: the next event must not reach the receiver
// before them. Each replica is a Router of its own (no memory shared) on one in-memory store, delivering to a real
// HTTP receiver on 127.0.0.1. The sequencer's "arrived" flag is what the router is handed for a moved instance.

const ID = instanceIdFor('acme', 'router-slow-move');
const AT = '2026-11-23T10:00:00.000Z';
const TIMEOUT_MS = 1_500;

/** Counts reads of the instance's handover marker (the hot path must not make any). */
class CountingStore extends InMemoryEventStore {
  markerReads = 0;
  override version(stream: string): Promise<number> {
    if (stream.endsWith('.handover')) this.markerReads++;
    return super.version(stream);
  }
}

describe('Router: a handover survives the instance moving to another replica or a restart (application)', () => {
  const rig = receiverRig({ instanceId: ID, store: () => new CountingStore(), pathPrefix: '/move', timeoutMs: TIMEOUT_MS });
  /** `handOut(router, commits, answers, arrived)`: `arrived` as the work item carries it (absent: an old sender). */
  const { receiver, sent, handOut } = rig;
  let store: CountingStore;
  let path = '';

  beforeEach(async () => {
    ({ store, path } = rig);
    await rig.givenInstance(AT);
  });

  /** A replica's router: nothing in memory shared with the others. */
  const replica = (): Router => rig.routerWith({ concurrency: 4, slowAfterMs: 200 });
  const notBeforeOf = async (id: string): Promise<string | undefined> => {
    const [commit] = await store.readStream(deliveryStream(ID, id));
    return (commit?.events[0]?.data as { not_before?: string } | undefined)?.not_before;
  };
  /** m1 hangs on `first` (handed off), m2 is recorded behind it: both wait for the deliverer. */
  const slowOn = async (first: Router): Promise<Sent[]> => {
    receiver.script(path, 'hang');
    const before = receiver.on(path).length;
    const events = await sent(2, 1);
    const answers: string[] = [];
    handOut(
      first,
      events.map((e) => e.commit),
      answers,
      [true, false],
    );
    await waitFor(() => answers.length === 2, 4 * TIMEOUT_MS);
    expect(answers).toEqual(events.map((e) => `ack ${e.commit.sequence}`));
    expect(
      receiver
        .on(path)
        .slice(before)
        .map((r) => r.body.data.message_id),
    ).toEqual(['m1']);
    return events;
  };

  it.each([
    ['moved to another replica, or its replica restarted (the sequencer marks its first event there)', [true]],
    ['is forwarded by a sequencer of an earlier release (no mark: taken as arrived)', undefined],
  ])('records the next event behind the handed-over ones when the instance %s', async (_why, arrived) => {
    const a = replica();
    const [m1] = await slowOn(a);
    // The instance now goes to b (a joined replica, or a after a restart: a new process, no memory).
    const b = replica();
    const [m3] = await sent(1, 3);
    const answers: string[] = [];
    handOut(b, [m3!.commit], answers, arrived);
    await b.idle();
    expect(answers).toEqual([`ack ${m3!.commit.sequence}`]);
    // Not sent from b before m1 and m2 had their attempts from the deliverer: recorded behind them, as on a.
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m1']);
    expect(await notBeforeOf(m3!.id)).toBe(await notBeforeOf(m1!.id));
    await a.idle();
  });

  it('records behind a handover made elsewhere when the instance comes back to a replica that knew it before', async () => {
    const a = replica();
    const b = replica();
    // a knows the instance (its endpoint was fast then), then it moves to b, where its endpoint hangs.
    const [m0] = await sent(1, 0);
    const answers: string[] = [];
    handOut(a, [m0!.commit], answers, [true]);
    await a.idle();
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m0']);
    const [m1] = await slowOn(b);
    // Back on a: its memory of the instance is stale; the sequencer marks the first event there.
    const [m3] = await sent(1, 3);
    handOut(a, [m3!.commit], answers, [true]);
    await a.idle();
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m0', 'm1']);
    expect(await notBeforeOf(m3!.id)).toBe(await notBeforeOf(m1!.id));
    await b.idle();
  });

  it('reads no marker for an event that is not the first of its instance on the replica (the hot path)', async () => {
    const a = replica();
    const events = await sent(3, 1);
    const answers: string[] = [];
    handOut(
      a,
      events.map((e) => e.commit),
      answers,
      [true, false, false],
    );
    await a.idle();
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m1', 'm2', 'm3']);
    expect(store.markerReads).toBe(1);
  });
});
