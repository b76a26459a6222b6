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
}

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

  /** The count of `key` in its current window, without counting a request. */
  read(key: string, windowMs: number): { current: number; ttl: number } {
    const now = this.now();
    const endsAt = (Math.floor(now / windowMs) + 1) * windowMs;
    const entry = this.entries.get(key);
    return entry?.endsAt === endsAt ? { current: entry.local + entry.remote, ttl: endsAt - now } : { current: 0, ttl: 0 };
  }

  private entryFor(key: string, endsAt: number): Entry {
    let entry = this.entries.get(key);
    if (!entry || entry.endsAt < endsAt) {
      entry = { endsAt, local: 0, remote: 0, unsent: 0 };
      this.entries.set(key, entry);
    }
    return entry;
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
    for (const [key, endsAt, count] of counts) {
      const entry = this.entryFor(key, endsAt);
      // A count of a window that already ended here is stale.
      if (entry.endsAt === endsAt) entry.remote += count;
    }
  }

  /** Forgets windows that have ended (their keys start again from 0 anyway). */
  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.endsAt <= now && entry.unsent === 0) this.entries.delete(key);
  }
}
