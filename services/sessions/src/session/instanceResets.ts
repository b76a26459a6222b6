import { unavailable, type Logger, type Ownership } from '@wagw/lib';
import type { InstanceRegistry } from '../registry/instanceRegistry';

/**
 * reset_instance as a sessions replica carries it out: every replica sees the reset in the log; the one that holds
 * the instance's lease, or takes it free, logs the device out and wipes its stored link (`wipe`), then gives the lease
 * up. A connection of the instance started meanwhile (get_qrcode right after the reset, to link again) waits for it
 * (`settle`): the wipe would close it, and the lease it runs under would be given up.
 *
 * A replica that finds another holding the lease keeps the reset pending: should that holder have died before doing
 * it, the replica does it once the lease has run out (`sweep`), or before it starts a connection of the instance
 * (`settle`). Otherwise the reset would be lost, and the old phone's link would come back at the next connection.
 */
export class InstanceResets {
  /** Resets being carried out here, by instance, one after the other. */
  private readonly underWay = new Map<string, Promise<void>>();
  /** Resets not carried out yet (another replica held the lease, or the wipe failed). */
  private readonly pending = new Set<string>();

  constructor(
    private readonly registry: InstanceRegistry,
    private readonly leases: Pick<Ownership, 'acquire' | 'release' | 'isFree'>,
    private readonly logger: Logger,
    /** Logs out the instance's connection here, if any, and wipes its stored credentials. */
    private readonly wipe: (instanceId: string) => Promise<void>,
  ) {}

  /** A reset applied from the log: carried out now when the lease is this replica's or free, else pending here. */
  request(instanceId: string): Promise<void> {
    this.pending.add(instanceId);
    return this.serially(instanceId, () => this.underLease(instanceId));
  }

  /** Whether a reset is being carried out here (it takes the instance's lease, and gives it up when done). */
  busy(instanceId: string): boolean {
    return this.underWay.has(instanceId);
  }

  /**
   * Before a connection of the instance starts here (its lease held): a reset under way finishes first, as its wipe
   * would close the new connection and its end gives the lease up (taken again here); a pending one is done now.
   */
  async settle(instanceId: string): Promise<void> {
    for (let waited = 0; this.underWay.has(instanceId); waited++) {
      // Bounded: more resets in a row than this means they keep coming; the caller tries again later.
      if (waited >= SETTLE_ROUNDS) throw unavailable('instance_resetting', 'The instance is being reset; try again');
      await this.underWay.get(instanceId);
      if (!(await this.leases.acquire(instanceId))) throw unavailable('owner_changed', 'Another replica runs this instance now; try again');
    }
    if (!this.stillPending(instanceId)) return;
    await this.serially(instanceId, async () => {
      if (this.stillPending(instanceId)) await this.carryOut(instanceId);
    });
    if (this.pending.has(instanceId)) throw unavailable('reset_unfinished', 'The reset of the instance is not finished yet; try again');
  }

  /** Carries out the pending resets whose lease is free now (their holder died first): the claim sweep's part. */
  async sweep(closing: () => boolean): Promise<void> {
    for (const instanceId of [...this.pending]) {
      if (closing()) return;
      // One under way here settles it (or leaves it pending, for the next sweep).
      if (this.busy(instanceId) || !this.stillPending(instanceId) || !this.leases.isFree(instanceId)) continue;
      await this.serially(instanceId, async () => {
        if (this.stillPending(instanceId)) await this.underLease(instanceId);
      });
    }
  }

  /**
   * A pending reset is void once the instance is linked again: it was carried out before the new link was made (by the
   * holder, or by the replica that took the lease after it), and the new link must stay. Carried out twice, a reset
   * does no harm: nothing is linked.
   */
  private stillPending(instanceId: string): boolean {
    if (!this.pending.has(instanceId)) return false;
    if (!this.registry.get(instanceId)?.linkedNumber) return true;
    this.pending.delete(instanceId);
    return false;
  }

  private async underLease(instanceId: string): Promise<void> {
    if (!(await this.leases.acquire(instanceId))) return;
    try {
      await this.carryOut(instanceId);
    } finally {
      await this.leases.release(instanceId);
    }
  }

  /** Pending until the wipe succeeds: a failed one is tried again by the sweep, or before the next start. */
  private async carryOut(instanceId: string): Promise<void> {
    await this.wipe(instanceId);
    this.pending.delete(instanceId);
  }

  private serially(instanceId: string, work: () => Promise<void>): Promise<void> {
    const done: Promise<void> = (this.underWay.get(instanceId) ?? Promise.resolve())
      .then(work)
      .catch((error: unknown) => this.logger.error({ err: error, instanceId }, 'resetting the session failed'))
      .finally(() => {
        if (this.underWay.get(instanceId) === done) this.underWay.delete(instanceId);
      });
    this.underWay.set(instanceId, done);
    return done;
  }
}

/** How many resets in a row a starting connection waits for before it gives up. */
const SETTLE_ROUNDS = 3;
