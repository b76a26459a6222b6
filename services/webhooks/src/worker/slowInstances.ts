import type { EventStore } from '@wagw/lib';
import { deliveryStream } from '../delivery/events';
import { holdsErasedContent, type ErasureView } from '../endpoints/contentErasure';
import type { WebhookEvent } from '../routing/webhookEvent';
import { recordDelivery, recorded, scheduledEvent, type DeliveryTarget } from './firstAttempt';
import { handoverMarked, handoverOf, handoverStream, type HandoverState } from './handoverMarker';

/** A handover as this replica holds it, and which marker commit holds it in the store (null: not stored yet). */
interface Handover extends HandoverState {
  marker: number | null;
}

/**
 * Instances whose lane handed an attempt to the deliverer (their endpoint was slow). Their next events are recorded
 * as pending deliveries behind it, not attempted by the router, until the last one handed over has had its first
 * attempt: a first attempt made here meanwhile would go out before those waiting for the deliverer. They wait until
 * the handed-off attempt has surely ended (`until`), so the deliverer does not send them beside it.
 *
 * Held in memory for the hot path, and stored as the instance's handover marker (`handoverMarker.ts`) before the
 * event is acked: the instance may move to another replica, or this one restart, between two events. A replica reads
 * the marker only for the first event of an instance it works on since the instance came to it (`arrived`, from the
 * sequencer): until the instance leaves, it is the only one to change it.
 */
export class SlowInstances {
  private readonly instances = new Map<string, Handover>();
  /** Instances that came to this replica and whose marker was not read since: what is held here may be stale. */
  private readonly unsure = new Set<string>();

  constructor(
    private readonly deliveries: EventStore,
    private readonly erasure: ErasureView,
  ) {}

  /** The instance came to this replica (or may have): its marker is read before its next webhook goes out. */
  arrived(instanceId: string): void {
    this.unsure.add(instanceId);
  }

  async handedOff(instanceId: string, until: Date, stream: string, version: number | null): Promise<void> {
    const handover: Handover = { until: until.getTime(), stream, version, marker: null };
    this.instances.set(instanceId, handover);
    this.unsure.delete(instanceId);
    await this.store(instanceId, handover);
  }

  /** Records the webhook for the deliverer (true) when the instance's earlier ones wait there; false: attempt it. */
  async pass(instanceId: string, webhook: WebhookEvent, target: DeliveryTarget): Promise<boolean> {
    const handover = this.unsure.has(instanceId) ? await this.restore(instanceId) : this.instances.get(instanceId);
    if (!handover) return false;
    // Before `until` nothing handed over can have had its attempt from the deliverer: no read needed.
    if (Date.now() >= handover.until && !(await this.waiting(handover))) {
      this.instances.delete(instanceId);
      return false;
    }
    if (target.redelivered && (await recorded(this.deliveries, instanceId, target.deliveryId))) {
      // Recorded before a failure that may have kept its marker from being stored.
      if (handover.marker === null) await this.store(instanceId, handover);
      return true;
    }
    const stream = deliveryStream(instanceId, target.deliveryId);
    // Without its payload when the instance was erased since the event: the deliverer then drops it (content_erased).
    const opening = scheduledEvent(instanceId, webhook, target, {
      notBefore: new Date(handover.until),
      erased: holdsErasedContent(this.erasure, instanceId, webhook),
    });
    handover.version = await recordDelivery(this.deliveries, stream, [opening], `record-${target.deliveryId}`);
    handover.stream = stream;
    handover.marker = null;
    await this.store(instanceId, handover);
    return true;
  }

  /** Stores the handover as the instance's marker (tried again as a delivery's record is); the event is acked after. */
  private async store(instanceId: string, handover: Handover): Promise<void> {
    const commandId = `handover-${handover.stream}-${handover.until}`;
    handover.marker = await recordDelivery(this.deliveries, handoverStream(instanceId), [handoverMarked(handover)], commandId, 'any');
  }

  /**
   * The instance's handover as its marker has it, for its first event here since it came: another replica may have
   * handed over since this one last had it (or this one restarted). The marker this replica stored last needs one read.
   */
  private async restore(instanceId: string): Promise<Handover | undefined> {
    const stream = handoverStream(instanceId);
    const last = await this.deliveries.version(stream);
    const held = this.instances.get(instanceId);
    let handover: Handover | undefined;
    if (last > 0 && held?.marker === last) handover = held;
    else if (last > 0) {
      const state = handoverOf((await this.deliveries.readPattern(stream, last, 1)).commits[0]);
      handover = state ? { ...state, marker: last } : undefined;
    } else if (held?.marker === null) {
      // No marker, but one held here that storing failed for: nobody else handed over since, it still stands.
      handover = held;
    }
    if (handover) this.instances.set(instanceId, handover);
    else this.instances.delete(instanceId);
    this.unsure.delete(instanceId);
    return handover;
  }

  /** Whether the last delivery handed over still waits for its first attempt (nothing recorded on it since). */
  private async waiting(handover: Handover): Promise<boolean> {
    if (handover.version === null) return false;
    const version = await this.deliveries.version(handover.stream);
    // No record at all (a marker outliving its delivery's record): nothing of it waits.
    return version > 0 && version <= handover.version;
  }
}
