import type { Logger } from '@wagw/lib';
import type { LeaseRecord, LeaseStore } from './leaseStore';

export interface OwnershipOptions {
  /** This replica's id, written into the leases it holds. */
  replicaId: string;
  /** How long a lease lasts without renewal: the longest a dead replica keeps its instances. */
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
 * lost (taken over after a partition, or unrenewable for longer than the TTL) so their connections stop at once.
 * It also keeps a live view of every replica's leases (a KV watch), so it can tell which instances nobody holds.
 */
export class Ownership {
  private readonly held = new Map<string, Held>();
  private readonly others = new Map<string, LeaseRecord>();
  private readonly lostListeners = new Set<(instanceId: string) => void>();
  private readonly freedListeners = new Set<(instanceId: string) => void>();
  private timer: NodeJS.Timeout | null = null;
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
    this.stopWatch = await this.store.watch((instanceId, lease) => this.observe(instanceId, lease));
    this.timer = setInterval(() => {
      this.renewing = this.renewAll();
    }, this.options.renewEveryMs);
    this.timer.unref();
  }

  /** Stops renewing and gives every held lease up (a clean shutdown hands them over at once). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.renewing;
    await Promise.all([...this.held.keys()].map((id) => this.release(id)));
    this.stopWatch?.();
  }

  owns(instanceId: string): boolean {
    return this.held.has(instanceId);
  }

  ownedCount(): number {
    return this.held.size;
  }

  /** Whether no live replica holds the instance's lease, as far as the watch has seen. */
  isFree(instanceId: string, now = Date.now()): boolean {
    if (this.held.has(instanceId)) return false;
    const lease = this.others.get(instanceId);
    return !lease || lease.until <= now;
  }

  /** The live replica (not this one) holding the instance's lease, as far as the watch has seen, or null. */
  holderOf(instanceId: string, now = Date.now()): string | null {
    const lease = this.others.get(instanceId);
    return lease && lease.until > now ? lease.owner : null;
  }

  /** Takes the instance's lease (true), or finds another live replica holding it (false). */
  async acquire(instanceId: string): Promise<boolean> {
    if (this.held.has(instanceId)) return true;
    const now = Date.now();
    const revision = await this.store.tryAcquire(instanceId, this.replicaId, this.options.ttlMs, now);
    if (revision === null) return false;
    this.held.set(instanceId, { revision, renewedAt: now });
    return true;
  }

  async release(instanceId: string): Promise<void> {
    const held = this.held.get(instanceId);
    if (!held) return;
    this.held.delete(instanceId);
    await this.store.release(instanceId, held.revision).catch((error: unknown) => this.logger.warn({ err: error, instanceId }, 'releasing a lease failed; it expires by itself'));
  }

  /** Called when a held lease is lost: the instance's connection must stop now (another replica may run it). */
  onLost(listener: (instanceId: string) => void): void {
    this.lostListeners.add(listener);
  }

  /** Called when another replica's lease is released (a clean shutdown), so this one can take it over at once. */
  onFreed(listener: (instanceId: string) => void): void {
    this.freedListeners.add(listener);
  }

  private observe(instanceId: string, lease: LeaseRecord | null): void {
    if (lease && lease.owner !== this.replicaId) {
      this.others.set(instanceId, lease);
      if (this.held.has(instanceId)) this.lose(instanceId, 'another replica wrote the lease');
      return;
    }
    const wasOthers = this.others.delete(instanceId);
    if (!lease && wasOthers) for (const listener of this.freedListeners) listener(instanceId);
  }

  private async renewAll(): Promise<void> {
    const { ttlMs, replicaId } = this.options;
    await Promise.all(
      [...this.held].map(async ([instanceId, held]) => {
        const now = Date.now();
        try {
          const revision = await this.store.renew(instanceId, replicaId, held.revision, ttlMs, now);
          if (this.held.get(instanceId) !== held) return;
          if (revision === null) return this.lose(instanceId, 'the lease was taken over');
          held.revision = revision;
          held.renewedAt = now;
        } catch (error) {
          if (this.held.get(instanceId) !== held) return;
          if (now - held.renewedAt >= ttlMs) return this.lose(instanceId, 'the lease could not be renewed before it expired');
          this.logger.warn({ err: error, instanceId }, 'renewing a lease failed; retrying');
        }
      }),
    );
  }

  private lose(instanceId: string, why: string): void {
    this.held.delete(instanceId);
    this.logger.warn({ instanceId, why }, 'lease lost: stopping the connection');
    for (const listener of this.lostListeners) listener(instanceId);
  }
}
