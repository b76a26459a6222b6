import type { WebhookEvent } from '../routing/webhookEvent';
import { recordOffDrop, type DeliveryTarget, type FirstAttemptDeps } from './firstAttempt';

/** Drops recorded at once: a large replay stopped early records its rest quickly, holding a bounded number of appends. */
const DROPS_IN_FLIGHT = 64;

type DropDeps = Pick<FirstAttemptDeps, 'deliveries' | 'erasure'>;

/**
 * Records a stopped replay's remaining events as dropped deliveries, up to DROPS_IN_FLIGHT at once (they go to no
 * endpoint, so they are not paced; one at a time, a replay of 100,000 events would take minutes to record its rest).
 * `settle` before recording progress past them: a failure then surfaces, and the replay resumes before them.
 */
export class ReplayDrops {
  private readonly inFlight = new Set<Promise<void>>();
  private failure: { error: unknown } | null = null;

  constructor(
    private readonly deps: DropDeps,
    private readonly instanceId: string,
    /** Dropped by earlier runs of the replay (its recorded progress). */
    public count: number,
  ) {}

  async add(webhook: WebhookEvent, target: DeliveryTarget): Promise<void> {
    this.throwFailure();
    // Caught here, so one failing while the replay throws for another reason is no unhandled rejection.
    const drop: Promise<void> = recordOffDrop(this.deps, this.instanceId, webhook, target)
      .catch((error: unknown) => void (this.failure ??= { error }))
      .finally(() => this.inFlight.delete(drop));
    this.inFlight.add(drop);
    this.count++;
    if (this.inFlight.size >= DROPS_IN_FLIGHT) await Promise.race(this.inFlight);
  }

  /** Waits for every drop under way; throws the first failure. */
  async settle(): Promise<void> {
    await Promise.all(this.inFlight);
    this.throwFailure();
  }

  private throwFailure(): void {
    if (this.failure) throw this.failure.error;
  }
}
