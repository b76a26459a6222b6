import type { EventStore } from '@wagw/lib';
import { deliveryStream } from '../delivery/events';
import { holdsErasedContent, type ErasureView } from '../endpoints/contentErasure';
import type { WebhookEvent } from '../routing/webhookEvent';
import { recordDelivery, recorded, scheduledEvent, type DeliveryTarget } from './firstAttempt';

/** The last delivery an instance's lane handed to the deliverer, and when the deliverer may first attempt it. */
interface Handover {
  until: number;
  stream: string;
  /** Its version as recorded here; null when it was recorded before (its progress is not known here). */
  version: number | null;
}

/**
 * Instances whose lane handed an attempt to the deliverer (their endpoint was slow). Their next events are recorded
 * as pending deliveries behind it, not attempted by the router, until the last one handed over has had its first
 * attempt: a first attempt made here meanwhile would go out before those waiting for the deliverer. They wait until
 * the handed-off attempt has surely ended (`until`), so the deliverer does not send them beside it.
 */
export class SlowInstances {
  private readonly instances = new Map<string, Handover>();

  constructor(
    private readonly deliveries: EventStore,
    private readonly erasure: ErasureView,
  ) {}

  handedOff(instanceId: string, until: Date, stream: string, version: number | null): void {
    this.instances.set(instanceId, { until: until.getTime(), stream, version });
  }

  /** Records the webhook for the deliverer (true) when the instance's earlier ones wait there; false: attempt it. */
  async pass(instanceId: string, webhook: WebhookEvent, target: DeliveryTarget): Promise<boolean> {
    const handover = this.instances.get(instanceId);
    if (!handover) return false;
    // Before `until` nothing handed over can have had its attempt from the deliverer: no read needed.
    if (Date.now() >= handover.until && !(await this.waiting(handover))) {
      this.instances.delete(instanceId);
      return false;
    }
    if (target.redelivered && (await recorded(this.deliveries, instanceId, target.deliveryId))) return true;
    const stream = deliveryStream(instanceId, target.deliveryId);
    // Without its payload when the instance was erased since the event: the deliverer then drops it (content_erased).
    const opening = scheduledEvent(instanceId, webhook, target, {
      notBefore: new Date(handover.until),
      erased: holdsErasedContent(this.erasure, instanceId, webhook),
    });
    handover.version = await recordDelivery(this.deliveries, stream, [opening], `record-${target.deliveryId}`);
    handover.stream = stream;
    return true;
  }

  /** Whether the last delivery handed over still waits for its first attempt (nothing recorded on it since). */
  private async waiting(handover: Handover): Promise<boolean> {
    if (handover.version === null) return false;
    return (await this.deliveries.version(handover.stream)) <= handover.version;
  }
}
