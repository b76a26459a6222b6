import { WindowCounter, type PeerChannel, type PeerCounts } from './windowCounter';

/** Replicas wired to each other in memory; `deliver()` hands over what was published (a NATS round trip). */
const bus = () => {
  const handlers: Array<(m: PeerCounts) => void> = [];
  const queue: PeerCounts[] = [];
  const channel: PeerChannel = {
    publish: (m) => queue.push(m),
    subscribe: (h) => {
      handlers.push(h);
      return () => handlers.splice(handlers.indexOf(h), 1);
    },
  };
  return { channel, deliver: () => queue.splice(0).forEach((m) => handlers.forEach((h) => h(m))) };
};

describe('WindowCounter', () => {
  let clock = 0;
  const now = () => clock;
  const counters: WindowCounter[] = [];
  const counter = (replicaId: string, channel?: PeerChannel) => {
    const c = new WindowCounter({ replicaId, channel, syncMs: 60_000, now });
    c.start();
    counters.push(c);
    return c;
  };
  beforeEach(() => {
    clock = 1_000_000;
  });
  afterEach(() => counters.splice(0).forEach((c) => c.stop()));

  it('counts a key within its window and starts again in the next one, with the time left as ttl', () => {
    const c = counter('a');
    expect(c.incr('k', 60_000, 10)).toEqual({ current: 1, ttl: 20_000 });
    expect(c.incr('k', 60_000, 10).current).toBe(2);
    expect(c.incr('other', 60_000, 10).current).toBe(1);
    clock += 20_000;
    expect(c.incr('k', 60_000, 10)).toEqual({ current: 1, ttl: 60_000 });
  });

  it('adds what the other replicas admitted, so the limit holds for the key as a whole', () => {
    const { channel, deliver } = bus();
    const a = counter('a', channel);
    const b = counter('b', channel);
    for (let i = 0; i < 30; i++) a.incr('acct', 60_000, 100);
    for (let i = 0; i < 20; i++) b.incr('acct', 60_000, 100);
    deliver();
    expect(a.read('acct', 60_000).current).toBe(50);
    expect(b.incr('acct', 60_000, 100).current).toBe(51);
  });

  it('announces a key at once when its unsent count reaches 2 % of its limit, and otherwise waits for the sync', () => {
    const { channel, deliver } = bus();
    const a = counter('a', channel);
    const b = counter('b', channel);
    a.incr('slow', 60_000, 1_000);
    deliver();
    expect(b.read('slow', 60_000).current).toBe(0);
    for (let i = 0; i < 19; i++) a.incr('slow', 60_000, 1_000);
    deliver();
    expect(b.read('slow', 60_000).current).toBe(20);
  });

  it('ignores counts of a window that has already ended here, and its own announcements', () => {
    const { channel, deliver } = bus();
    const a = counter('a', channel);
    const b = counter('b', channel);
    for (let i = 0; i < 5; i++) a.incr('k', 60_000, 100);
    clock += 60_000;
    b.incr('k', 60_000, 100);
    deliver();
    expect(b.read('k', 60_000).current).toBe(1);
    expect(a.read('k', 60_000).current).toBe(0);
  });

  it('takes back a request counted for a key, here and, at the next announcement, on the other replicas', () => {
    const { channel, deliver } = bus();
    const a = counter('a', channel);
    const b = counter('b', channel);
    a.incr('addr', 60_000, 100);
    a.incr('addr', 60_000, 100);
    deliver();
    expect(b.read('addr', 60_000).current).toBe(2);
    a.release('addr', 60_000);
    expect(a.read('addr', 60_000).current).toBe(1);
    a.stop();
    deliver();
    expect(b.read('addr', 60_000).current).toBe(1);
    // Nothing to take back in a window where nothing was counted.
    clock += 60_000;
    b.release('addr', 60_000);
    expect(b.incr('addr', 60_000, 100).current).toBe(1);
  });

  it("keeps a window's counts, sent and unsent, when a replica whose clock is ahead already counts the next one", () => {
    const { channel, deliver } = bus();
    // b's clock is 1 s ahead: it is in the next window while a and c are still 1 s before the end of theirs.
    clock = 60_000 * 20 - 1_000;
    const a = counter('a', channel);
    const c = counter('c', channel);
    const ahead = new WindowCounter({ replicaId: 'b', channel, syncMs: 60_000, now: () => clock + 1_000 });
    ahead.start();
    counters.push(ahead);
    a.incr('k', 60_000, 1_000);
    for (let i = 0; i < 20; i++) ahead.incr('k', 60_000, 1_000);
    deliver();
    // a's count of this window stays its own: b's 20 are the next window's.
    expect(a.read('k', 60_000).current).toBe(1);
    for (let i = 0; i < 19; i++) a.incr('k', 60_000, 1_000);
    // a's 20 of this window (the first one unsent when b's count came) reach c, which is in the same window.
    deliver();
    expect(c.read('k', 60_000).current).toBe(20);
    // Once a's window ends, b's count of the next one is there.
    clock += 1_000;
    expect(a.incr('k', 60_000, 1_000)).toEqual({ current: 21, ttl: 60_000 });
  });
});
