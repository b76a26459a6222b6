import { WEBHOOK_OFF } from '../delivery/decisions';
import type { WebhookEvent } from '../routing/webhookEvent';
import { asReplayed, recordDropped, type DeliveryTarget, type FirstAttemptDeps } from './firstAttempt';

/** Drops recorded at once: a large replay stopped early records its rest quickly, holding a bounded number of appends. */
const DROPS_IN_FLIGHT = 64;

type DropDeps = Pick<FirstAttemptDeps, 'deliveries' | 'erasure'>;

/**
 * A replay's event whose turn came after the webhook was switched off: recorded as a dropped delivery of its own (as
 * the deliverer drops one whose turn comes then), never sent, its payload as the replay would have sent it. On the
 * delivery's job stream, where a first attempt's failure would be: one record per delivery either way.
 */
const recordDrop = (deps: DropDeps, instanceId: string, webhook: WebhookEvent, target: DeliveryTarget): Promise<void> => {
  const payload = asReplayed(deps.erasure.contentErased(instanceId, webhook.type, webhook.timestamp), webhook);
  return recordDropped(deps.deliveries, instanceId, payload, target, { reason: WEBHOOK_OFF, erased: false });
};

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
    const drop: Promise<void> = recordDrop(this.deps, this.instanceId, webhook, target)
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
