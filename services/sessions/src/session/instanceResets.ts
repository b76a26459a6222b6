import { unavailable, type Logger, type Ownership } from '@wagw/lib';

/**
 * reset_instance as a sessions replica carries it out: every replica sees the reset in the log; the one that holds
 * the instance's lease, or takes it free, logs the device out and wipes its stored link (`wipe`), then gives the lease
 * up. A connection of the instance started meanwhile (get_qrcode right after the reset, to link again) waits for it
 * (`settle`): the wipe would close it, and the lease it runs under would be given up.
 */
export class InstanceResets {
  /** Resets being carried out here, by instance, one after the other. */
  private readonly underWay = new Map<string, Promise<void>>();

  constructor(
    private readonly leases: Pick<Ownership, 'acquire' | 'release'>,
    private readonly logger: Logger,
    /** Logs out the instance's connection here, if any, and wipes its stored credentials. */
    private readonly wipe: (instanceId: string) => Promise<void>,
  ) {}

  /** A reset applied from the log: carried out now when the lease is this replica's or free, else by its holder. */
  request(instanceId: string): Promise<void> {
    return this.serially(instanceId, () => this.underLease(instanceId));
  }

  /** Whether a reset is being carried out here (it takes the instance's lease, and gives it up when done). */
  busy(instanceId: string): boolean {
    return this.underWay.has(instanceId);
  }

  /**
   * Before a connection of the instance starts here (its lease held): a reset under way finishes first, as its wipe
   * would close the new connection and its end gives the lease up (taken again here).
   */
  async settle(instanceId: string): Promise<void> {
    for (let waited = 0; this.underWay.has(instanceId); waited++) {
      // Bounded: more resets in a row than this means they keep coming; the caller tries again later.
      if (waited >= SETTLE_ROUNDS) throw unavailable('instance_resetting', 'The instance is being reset; try again');
      await this.underWay.get(instanceId);
      if (!(await this.leases.acquire(instanceId))) throw unavailable('owner_changed', 'Another replica runs this instance now; try again');
    }
  }

  private async underLease(instanceId: string): Promise<void> {
    if (!(await this.leases.acquire(instanceId))) return;
    try {
      await this.wipe(instanceId);
    } finally {
      await this.leases.release(instanceId);
    }
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
