/** One replica's news for the others: requests it admitted per key since its last message, in the window ending at `endsAt`. */
export interface PeerCounts {
  replica: string;
  counts: Array<[key: string, endsAt: number, count: number]>;
}

/** How replicas tell each other their counts (core NATS in production, a function call in tests). */
export interface PeerChannel {
  publish(message: PeerCounts): void;
  subscribe(handler: (message: PeerCounts) => void): () => void;
}

export interface WindowCounterOptions {
  replicaId: string;
  /** Absent: this replica counts alone (one gateway). */
  channel?: PeerChannel;
  /** The longest a count stays unsent to the other replicas. */
  syncMs: number;
  now?: () => number;
}

interface Entry {
  endsAt: number;
  local: number;
  remote: number;
  unsent: number;
  /**
   * What the others counted for a later window than this one: a replica whose clock is a little ahead starts the next
   * window first. Kept beside the entry, not in its place, so this window's counts (and its unsent ones) stay.
   */
  ahead: { endsAt: number; remote: number } | null;
}

const fresh = (endsAt: number, remote = 0): Entry => ({ endsAt, local: 0, remote, unsent: 0, ahead: null });

/**
 * A key's share of a limit that may go unannounced: at most 2 % of it per replica. With two replicas this bounds the
 * overshoot of a burst that outruns `syncMs` to about 2 % plus what arrives within one NATS hop (measured, limit 100,
 * 50 requests in flight over 2 replicas: 100-106 admitted; announcing every 100 ms only: up to 109), while a key far
 * below its limit costs one message per `syncMs`, not one per request.
 */
const UNSENT_SHARE = 0.02;

/**
 * Fixed-window request counts shared by every gateway replica. Windows are aligned to the clock (they end at
 * multiples of the window), so replicas agree on them without talking; each replica counts what it admits and adds
 * what the others announced. A count is announced every `syncMs`, or at once when it reaches 2 % of the key's limit,
 * so the sum holds for the account as a whole.
 */
export class WindowCounter {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly options: WindowCounterOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.unsubscribe = this.options.channel?.subscribe((message) => this.receive(message)) ?? null;
    this.timer = setInterval(() => {
      this.flush();
      this.sweep();
    }, this.options.syncMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.flush();
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Counts one request for `key`; answers the count of its window across replicas and the ms left in it. */
  incr(key: string, windowMs: number, max: number): { current: number; ttl: number } {
    const now = this.now();
    const endsAt = (Math.floor(now / windowMs) + 1) * windowMs;
    const entry = this.entryFor(key, endsAt);
    entry.local += 1;
    entry.unsent += 1;
    if (this.options.channel && entry.unsent >= Math.max(1, Math.floor(max * UNSENT_SHARE))) this.announce(key, entry);
    return { current: entry.local + entry.remote, ttl: endsAt - now };
  }

  /**
   * Takes back one request counted for `key` in the current window: it turned out to count for another key (a
   * credential in the body is read after the request was counted for its address). Announced like a count, negative.
   */
  release(key: string, windowMs: number): void {
    const endsAt = (Math.floor(this.now() / windowMs) + 1) * windowMs;
    const entry = this.entries.get(key);
    // Counted in a window that has ended since: nothing left to take back.
    if (entry?.endsAt !== endsAt || entry.local === 0) return;
    entry.local -= 1;
    entry.unsent -= 1;
  }

  /** The count of `key` in its current window, without counting a request. */
  read(key: string, windowMs: number): { current: number; ttl: number } {
    const now = this.now();
    const endsAt = (Math.floor(now / windowMs) + 1) * windowMs;
    const entry = this.entries.get(key);
    if (entry?.endsAt === endsAt) return { current: entry.local + entry.remote, ttl: endsAt - now };
    if (entry && entry.endsAt < endsAt && entry.ahead?.endsAt === endsAt) return { current: entry.ahead.remote, ttl: endsAt - now };
    return { current: 0, ttl: 0 };
  }

  /** The entry of `key` for this replica's current window (ending at `endsAt`), started when there is none yet. */
  private entryFor(key: string, endsAt: number): Entry {
    const entry = this.entries.get(key);
    if (entry?.endsAt === endsAt) return entry;
    let next: Entry;
    if (!entry) next = fresh(endsAt);
    else if (entry.endsAt < endsAt) {
      // The window rolled over: its unsent counts still matter to a replica whose clock is behind (it is still in it).
      if (entry.unsent > 0) this.announce(key, entry);
      const { ahead } = entry;
      next = fresh(endsAt, ahead?.endsAt === endsAt ? ahead.remote : 0);
      if (ahead && ahead.endsAt > endsAt) next.ahead = ahead;
    } else {
      // The entry is a later window that only the others have counted so far (receive made it): it waits beside.
      next = fresh(endsAt);
      next.ahead = { endsAt: entry.endsAt, remote: entry.remote };
    }
    this.entries.set(key, next);
    return next;
  }

  /** Announces one key's unsent count now (nats.js sends what was published in one write per event-loop turn). */
  private announce(key: string, entry: Entry): void {
    this.options.channel?.publish({ replica: this.options.replicaId, counts: [[key, entry.endsAt, entry.unsent]] });
    entry.unsent = 0;
  }

  private flush(): void {
    const { channel, replicaId } = this.options;
    if (!channel) return;
    const counts: PeerCounts['counts'] = [];
    for (const [key, entry] of this.entries) {
      if (entry.unsent === 0) continue;
      counts.push([key, entry.endsAt, entry.unsent]);
      entry.unsent = 0;
    }
    if (counts.length > 0) channel.publish({ replica: replicaId, counts });
  }

  private receive({ replica, counts }: PeerCounts): void {
    if (replica === this.options.replicaId) return;
    const now = this.now();
    for (const [key, endsAt, count] of counts) {
      const entry = this.entries.get(key);
      if (!entry) this.entries.set(key, fresh(endsAt, count));
      else if (entry.endsAt === endsAt) entry.remote += count;
      else if (entry.endsAt < endsAt) this.addAhead(entry, endsAt, count);
      else if (endsAt > now && entry.local === 0) {
        // The entry was a later window the others counted first (its sender's clock is ahead); this one is still
        // running here, so it is the current one and the later one waits beside it.
        const current = fresh(endsAt, count);
        current.ahead = { endsAt: entry.endsAt, remote: entry.remote };
        this.entries.set(key, current);
      }
      // Else a count of a window that already ended here: stale.
    }
  }

  /** A count of a later window than the entry's; of two later windows the latest is kept (the other will have ended). */
  private addAhead(entry: Entry, endsAt: number, count: number): void {
    if (entry.ahead?.endsAt === endsAt) entry.ahead.remote += count;
    else if (!entry.ahead || entry.ahead.endsAt < endsAt) entry.ahead = { endsAt, remote: count };
  }

  /** Forgets windows that have ended (their keys start again from 0 anyway). */
  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (entry.endsAt > now || entry.unsent > 0) continue;
      // What the others counted for the window after it is the count that window starts from.
      if (entry.ahead && entry.ahead.endsAt > now) this.entries.set(key, fresh(entry.ahead.endsAt, entry.ahead.remote));
      else this.entries.delete(key);
    }
  }
}
