import { BUCKETS, LeaseStore, Ownership, type Logger, type NatsHandle, type OwnershipOptions } from '@wagw/lib';

/** The one lease in `BUCKETS.sessionsLeaders` that names the replica deciding for instances nobody holds. */
export const UNHELD_SENDS_LEASE = 'unheld-sends';

/**
 * Which sessions replica fails the queued sends of instances no replica holds (they can only fail: reset, logged
 * out, past the TTL): the holder of one lease. Before it, every replica read each of those sends and appended its
 * `MessageFailed`, and the copies were dropped by their command id only after the work was done once per replica.
 * The lease lives in a bucket of its own, so the instance leases' watchers never take it for an instance. A
 * replica stopping hands it over at once; a crashed one's lapses after the lease TTL, and its sends wait that long.
 */
export class UnheldSendsDecider {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The claim under way: one at a time, and a stop waits for it (else it could take the lease after the stop). */
  private claiming: Promise<void> | null = null;
  /** A failing claim is logged once, not every `claimEveryMs` on every replica while NATS is away. */
  private failing = false;

  private constructor(
    private readonly ownership: Ownership,
    private readonly claimEveryMs: number,
    private readonly logger: Logger,
  ) {}

  static async open(nats: NatsHandle, options: OwnershipOptions & { claimEveryMs: number }, logger: Logger): Promise<UnheldSendsDecider> {
    const { claimEveryMs, ...lease } = options;
    return new UnheldSendsDecider(new Ownership(await LeaseStore.open(nats, BUCKETS.sessionsLeaders), lease, logger), claimEveryMs, logger);
  }

  /** Starts renewing, and tries for the lease now and every `claimEveryMs` while another replica holds it. */
  async start(): Promise<void> {
    await this.ownership.start();
    await this.claim();
    if (this.stopped) return;
    this.timer = setInterval(() => void this.claim(), this.claimEveryMs);
    this.timer.unref();
  }

  /** Whether this replica decides for the instances nobody holds (it holds the lease). */
  decides(): boolean {
    return this.ownership.owns(UNHELD_SENDS_LEASE);
  }

  /** Gives the lease up, so another replica takes it at its next claim. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.claiming;
    await this.ownership.stop();
  }

  private claim(): Promise<void> {
    if (this.stopped || this.decides()) return Promise.resolve();
    this.claiming ??= this.ownership
      .acquire(UNHELD_SENDS_LEASE)
      .then(
        () => {
          this.failing = false;
        },
        (error: unknown) => {
          if (!this.failing) this.logger.warn({ err: error }, 'taking the unheld-sends lease failed; retrying');
          this.failing = true;
        },
      )
      .finally(() => {
        this.claiming = null;
      });
    return this.claiming;
  }
}
