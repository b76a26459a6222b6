import type { Delivery, Subscription } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { preferredReplica } from './assignment';
import { Sequencer, type SequencerLease, type SequencerMembers, type SequencerSender } from './sequencer';
import type { WorkOutcome } from './workChannel';

/** A subscription fed by the test. */
class Feed implements Subscription {
  private readonly items: Delivery[] = [];
  private wake: (() => void) | null = null;
  private closed = false;

  push(delivery: Delivery): void {
    this.items.push(delivery);
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Delivery> {
    for (;;) {
      const next = this.items.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }

  close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    return Promise.resolve();
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** An instance id whose preferred replica among `replicas` is `wanted`. */
const instanceFor = (wanted: string, replicas: string[], skip = 0): string => {
  const ids = Array.from({ length: 200 }, (_, i) => `I${String(i).padStart(19, '0')}`).filter((id) => preferredReplica(id, replicas) === wanted);
  return ids[skip]!;
};

describe('sequencer', () => {
  let feed: Feed;
  let usable: string[];
  let log: string[];
  let sent: Array<{ member: string; delivery: Delivery; answer: (outcome: WorkOutcome) => void; timeoutMs?: number | undefined; arrived: boolean }>;
  let local: Delivery[];
  /** Per event handed out (here or to another replica): its sequence, where it went, and whether it was marked arrived. */
  let arrivals: Array<[number, string, boolean]>;
  let goneListeners: Array<(member: string) => void>;
  let sequencer: Sequencer;

  const delivery = (instanceId: string, sequence: number): Delivery => ({
    commit: { stream: `${instanceId}.instance`, sequence, commandId: `c${sequence}`, events: [] },
    deliveryCount: 1,
    ack: () => log.push(`ack ${sequence}`),
    nak: () => log.push(`nak ${sequence}`),
    inProgress: () => undefined,
  });
  const leave = (member: string): void => {
    usable = usable.filter((m) => m !== member);
    goneListeners.forEach((listener) => listener(member));
  };

  beforeEach(async () => {
    feed = new Feed();
    usable = ['me', 'b'];
    log = [];
    sent = [];
    local = [];
    arrivals = [];
    goneListeners = [];
    const lease: SequencerLease = {
      start: () => Promise.resolve(),
      stop: () => Promise.resolve(),
      acquire: () => Promise.resolve(true),
      owns: () => true,
      onLost: () => undefined,
      onFreed: () => undefined,
    };
    const members: SequencerMembers = {
      self: 'me',
      usable: () => usable,
      unreachable: (member) => leave(member),
      onGone: (listener) => void goneListeners.push(listener),
    };
    const sender: SequencerSender = {
      send: (member, d, arrived, timeoutMs) =>
        new Promise<WorkOutcome>((answer) => {
          arrivals.push([d.commit.sequence, member, arrived]);
          sent.push({ member, delivery: d, answer, timeoutMs, arrived });
        }),
      abandon: (member) => sent.filter((s) => s.member === member).forEach((s) => s.answer({ kind: 'lost' })),
    };
    sequencer = new Sequencer(
      { subscribe: () => Promise.resolve(feed) },
      lease,
      members,
      sender,
      (_id, d, arrived) => {
        arrivals.push([d.commit.sequence, 'me', arrived]);
        local.push(d);
      },
      testLogger('sequencer'),
      {
        ackWaitMs: 60_000,
        batch: 10,
        claimEveryMs: 60_000,
        drainTimeoutMs: 50,
      },
    );
    await sequencer.start();
  });
  afterEach(() => sequencer.close());

  it("hands an instance's events to its replica, in order, and acks each once it is answered", async () => {
    const id = instanceFor('b', ['me', 'b']);
    feed.push(delivery(id, 1));
    feed.push(delivery(id, 2));
    await settle();
    expect(sent.map((s) => [s.member, s.delivery.commit.sequence])).toEqual([
      ['b', 1],
      ['b', 2],
    ]);
    sent[1]!.answer({ kind: 'ack' });
    sent[0]!.answer({ kind: 'nak', delayMs: 1_000 });
    await settle();
    expect(log).toEqual(['ack 2', 'nak 1']);
  });

  it('holds the events of an instance that moves until its earlier ones are done, then sends them in order', async () => {
    const id = instanceFor('b', ['me', 'b']);
    usable = ['me'];
    feed.push(delivery(id, 1));
    await settle();
    expect(local.map((d) => d.commit.sequence)).toEqual([1]);
    usable = ['me', 'b'];
    feed.push(delivery(id, 2));
    feed.push(delivery(id, 3));
    await settle();
    expect(sent).toHaveLength(0);
    local[0]!.ack();
    await settle();
    expect(log).toEqual(['ack 1']);
    expect(sent.map((s) => [s.member, s.delivery.commit.sequence])).toEqual([
      ['b', 2],
      ['b', 3],
    ]);
  });

  it("hands a gone replica's unfinished events to another one in order, as delivered again, and ignores its late answers", async () => {
    const id = instanceFor('b', ['me', 'b']);
    feed.push(delivery(id, 1));
    feed.push(delivery(id, 2));
    await settle();
    leave('b');
    await settle();
    expect(local.map((d) => [d.commit.sequence, d.deliveryCount])).toEqual([
      [1, 2],
      [2, 2],
    ]);
    expect(log).toEqual([]);
    local.forEach((d) => d.ack());
    await settle();
    expect(log).toEqual(['ack 1', 'ack 2']);
  });

  it('takes a replica that nobody answers for (no responders) for gone at once', async () => {
    const id = instanceFor('b', ['me', 'b']);
    feed.push(delivery(id, 1));
    await settle();
    sent[0]!.answer({ kind: 'unreachable' });
    await settle();
    expect(usable).toEqual(['me']);
    expect(local.map((d) => d.commit.sequence)).toEqual([1]);
  });

  it("at a clean shutdown hands back what other replicas did not answer, but lets this replica's own work finish", async () => {
    const remote = instanceFor('b', ['me', 'b']);
    const own = instanceFor('me', ['me', 'b']);
    feed.push(delivery(own, 1));
    feed.push(delivery(remote, 2));
    await settle();
    await sequencer.stop();
    expect(log).toEqual(['nak 2']);
    local[0]!.ack();
    expect(log).toEqual(['nak 2', 'ack 1']);
  });

  it('keeps an instance with its replica while an answer is late, forwarding the event again with a wait that doubles', async () => {
    const id = instanceFor('b', ['me', 'b']);
    feed.push(delivery(id, 1));
    await settle();
    for (let late = 0; late < 4; late++) {
      sent.at(-1)!.answer({ kind: 'lost' });
      await new Promise((resolve) => setTimeout(resolve, 1_050));
    }
    // The first forward waits as long as the inbox's own time-out; each one made again waits twice the one before.
    expect(sent.map((s) => [s.member, s.delivery.commit.sequence, s.delivery.deliveryCount, s.timeoutMs])).toEqual([
      ['b', 1, 1, undefined],
      ['b', 1, 2, 120_000],
      ['b', 1, 3, 240_000],
      ['b', 1, 4, 300_000],
      ['b', 1, 5, 300_000],
    ]);
    expect(log).toEqual([]);
    sent.at(-1)!.answer({ kind: 'ack' });
    await settle();
    expect(log).toEqual(['ack 1']);
  }, 10_000);

  it("marks an instance's first event on a replica as arrived: where it was not last, a gone replica's, a new leader's", async () => {
    const id = instanceFor('b', ['me', 'b']);
    // First seen by this leader: arrived (it may come from anywhere). The next one, while 1 is in flight: not.
    feed.push(delivery(id, 1));
    feed.push(delivery(id, 2));
    await settle();
    sent.forEach((s) => s.answer({ kind: 'ack' }));
    await settle();
    // Nothing in flight, but the instance stays with b: b knows it (no read of the handover marker there).
    feed.push(delivery(id, 3));
    await settle();
    sent.at(-1)!.answer({ kind: 'ack' });
    await settle();
    // b leaves: the instance moves here, its first event here is marked.
    leave('b');
    feed.push(delivery(id, 4));
    feed.push(delivery(id, 5));
    await settle();
    local.forEach((d) => d.ack());
    await settle();
    // b is back (a restarted replica has a new member id; the same id stands for one that rejoined): marked again.
    usable = ['me', 'b'];
    feed.push(delivery(id, 6));
    await settle();
    // b is gone with 6 in hand: it is worked on here, marked, as delivered again.
    leave('b');
    await settle();
    expect(arrivals).toEqual([
      [1, 'b', true],
      [2, 'b', false],
      [3, 'b', false],
      [4, 'me', true],
      [5, 'me', false],
      [6, 'b', true],
      [6, 'me', true],
    ]);
  });

  it('forwards an event again with its arrived mark when its answer was late (the first forward may never have come)', async () => {
    const id = instanceFor('b', ['me', 'b']);
    feed.push(delivery(id, 1));
    await settle();
    sent[0]!.answer({ kind: 'lost' });
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    expect(sent.map((s) => [s.delivery.commit.sequence, s.delivery.deliveryCount, s.arrived])).toEqual([
      [1, 1, true],
      [1, 2, true],
    ]);
    sent[1]!.answer({ kind: 'ack' });
    await settle();
  });
});
