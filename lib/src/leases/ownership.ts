import type { Logger } from '../log';
import type { LeaseRecord, LeaseStore } from './leaseStore';

export interface OwnershipOptions {
  /** This replica's id, written into the leases it holds. */
  replicaId: string;
  /** How long a lease lasts without renewal: the longest a dead replica keeps what it held. */
  ttlMs: number;
  /** How often held leases are renewed (well under `ttlMs`). */
  renewEveryMs: number;
}

interface Held {
  revision: number;
  /** When the lease was last written by us (our clock): past `ttlMs` we must assume it is gone. */
  renewedAt: number;
}

/**
 * The leases this replica holds: takes them, renews them all on a timer, gives them up, and reports the ones it
 * lost (taken over after a partition, or unrenewable for longer than the TTL) so their work stops at once.
 * It also keeps a live view of every replica's leases (a KV watch), so it can tell which keys nobody holds.
 */
export class Ownership {
  private readonly held = new Map<string, Held>();
  private readonly others = new Map<string, LeaseRecord>();
  private readonly lostListeners = new Set<(key: string) => void>();
  private readonly freedListeners = new Set<(key: string) => void>();
  private timer: NodeJS.Timeout | null = null;
  private expiryTimer: NodeJS.Timeout | null = null;
  private stopWatch: (() => void) | null = null;
  private renewing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: LeaseStore,
    readonly options: OwnershipOptions,
    private readonly logger: Logger,
  ) {}

  get replicaId(): string {
    return this.options.replicaId;
  }

  async start(): Promise<void> {
    this.stopWatch = await this.store.watch((key, lease) => this.observe(key, lease));
    this.timer = setInterval(() => {
      this.renewing = this.renewAll();
    }, this.options.renewEveryMs);
    this.timer.unref();
    // Independent of the renewals, which may hang for their whole time-out while NATS fails over.
    this.expiryTimer = setInterval(() => this.expireUnrenewed(), Math.max(50, Math.floor(this.safetyMarginMs() / 4)));
    this.expiryTimer.unref();
  }

  /**
   * A held lease whose last successful renewal is older than the TTL less this margin is given up here: its work
   * stops before another replica may take the lease (at the TTL, by the clock it was written with), so one instance
   * never has two live connections, even while renewals hang on a NATS node that died (seen in the compose drill:
   * the old holder stopped 0.7 s after the new one had started).
   */
  private safetyMarginMs(): number {
    return Math.floor(this.options.ttlMs / 4);
  }

  /** Whether a lease last written at `writtenAt` (our clock) must be taken as gone here (see safetyMarginMs). */
  private pastKeeping(writtenAt: number, now = Date.now()): boolean {
    return now - writtenAt >= this.options.ttlMs - this.safetyMarginMs();
  }

  private expireUnrenewed(now = Date.now()): void {
    for (const [key, held] of this.held) if (this.pastKeeping(held.renewedAt, now)) this.lose(key, 'the lease could not be renewed in time');
  }

  /** Stops renewing and gives every held lease up (a clean shutdown hands them over at once). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.expiryTimer) clearInterval(this.expiryTimer);
    this.timer = null;
    this.expiryTimer = null;
    await this.renewing;
    await Promise.all([...this.held.keys()].map((id) => this.release(id)));
    this.stopWatch?.();
  }

  owns(key: string): boolean {
    return this.held.has(key);
  }

  /** The keys whose lease this replica holds now. */
  ownedKeys(): string[] {
    return [...this.held.keys()];
  }

  /** Whether no live replica holds the lease, as far as the watch has seen. */
  isFree(key: string, now = Date.now()): boolean {
    if (this.held.has(key)) return false;
    const lease = this.others.get(key);
    return !lease || lease.until <= now;
  }

  /** The live replica (not this one) holding the lease, as far as the watch has seen, or null. */
  holderOf(key: string, now = Date.now()): string | null {
    const lease = this.others.get(key);
    return lease && lease.until > now ? lease.owner : null;
  }

  /**
   * Takes the lease (true), or finds another live replica holding it (false). A write that came back so late that
   * the lease would be given up at once (NATS failing over: the TTL runs from before the write) is not used: handed
   * back, false, as if another replica held it; its caller would start work the expiry stops a moment later.
   */
  async acquire(key: string): Promise<boolean> {
    if (this.held.has(key)) return true;
    const now = Date.now();
    const revision = await this.store.tryAcquire(key, this.replicaId, this.options.ttlMs, now);
    if (revision === null) return false;
    if (this.pastKeeping(now)) {
      this.logger.warn({ key, tookMs: Date.now() - now }, 'taking a lease took nearly its TTL; handed back');
      await this.store.release(key, revision).catch(() => undefined);
      return false;
    }
    this.held.set(key, { revision, renewedAt: now });
    return true;
  }

  async release(key: string): Promise<void> {
    const held = this.held.get(key);
    if (!held) return;
    this.held.delete(key);
    await this.store
      .release(key, held.revision)
      .catch((error: unknown) => this.logger.warn({ err: error, key }, 'releasing a lease failed; it expires by itself'));
  }

  /** Called when a held lease is lost: its work must stop now (another replica may have taken it). */
  onLost(listener: (key: string) => void): void {
    this.lostListeners.add(listener);
  }

  /** Called when another replica's lease is released (a clean shutdown), so this one can take it over at once. */
  onFreed(listener: (key: string) => void): void {
    this.freedListeners.add(listener);
  }

  private observe(key: string, lease: LeaseRecord | null): void {
    if (lease && lease.owner !== this.replicaId) {
      this.others.set(key, lease);
      if (this.held.has(key)) this.lose(key, 'another replica wrote the lease');
      return;
    }
    const wasOthers = this.others.delete(key);
    if (!lease && wasOthers) for (const listener of this.freedListeners) listener(key);
  }

  private async renewAll(): Promise<void> {
    const { ttlMs, replicaId } = this.options;
    await Promise.all(
      [...this.held].map(async ([key, held]) => {
        const now = Date.now();
        try {
          const revision = await this.store.renew(key, replicaId, held.revision, ttlMs, now);
          if (this.held.get(key) !== held) {
            // Given up meanwhile (the renewal came too late): hand it over now instead of at its expiry.
            if (revision !== null) await this.store.release(key, revision).catch(() => undefined);
            return;
          }
          if (revision === null) return await this.afterRefusedRenewal(key, held);
          held.revision = revision;
          held.renewedAt = now;
        } catch (error) {
          if (this.held.get(key) !== held) return;
          this.logger.warn({ err: error, key }, 'renewing a lease failed; retrying');
        }
      }),
    );
  }

  /**
   * A renewal refused because the lease moved past the revision held here: taken over, or an earlier renewal of this
   * replica's that was stored although its answer was lost (a time-out, a leader change). The lease says which: still
   * this replica's, its stored revision is taken and renewed from (it was renewed when that one was written).
   */
  private async afterRefusedRenewal(key: string, held: Held): Promise<void> {
    const record = await this.store.read(key).catch(() => null);
    if (this.held.get(key) !== held) return;
    if (record?.owner !== this.options.replicaId) return this.lose(key, 'the lease was taken over');
    held.revision = record.revision;
    held.renewedAt = Math.min(Date.now(), record.until - this.options.ttlMs);
  }

  private lose(key: string, why: string): void {
    this.held.delete(key);
    this.logger.warn({ key, why }, 'lease lost: stopping its work');
    for (const listener of this.lostListeners) listener(key);
  }
}
