import { isVersionConflict, type EventStore, type NewEvent } from '@wagw/lib';
import { deliveredStream, deliveryEvent, deliveryStream } from '../delivery/events';
import { evolveDelivery, initialDeliveryState, type Delivery } from '../delivery/state';
import type { WebhookEvent } from '../routing/webhookEvent';
import type { Attempter } from './attempter';
import type { CircuitBreaker } from './circuitBreaker';
import { disableWebhook } from '../endpoints/disableWebhook';

export interface FirstAttemptDeps {
  events: EventStore;
  deliveries: EventStore;
  attempter: Attempter;
  breaker: CircuitBreaker;
}

/** Which delivery an attempt is for: a live event's own (`deliveryId` = its webhook-id), or a replay's (`replayOf`). */
export interface DeliveryTarget {
  deliveryId: string;
  replayOf?: string;
  /** The work item came again (a crash or a time-out before its ack): it may have been handled already. */
  redelivered: boolean;
}

/**
 * The first attempt of a delivery (live events and replays alike). A success is recorded on
 * `<instance>.delivered.<id>`; anything else becomes a job on `<instance>.delivery.<id>` for the deliverer (retries,
 * dead letters). Records are idempotent (command id and expected version 0), so work done again records nothing
 * twice (it may be POSTed twice: at least once).
 */
export const firstAttempt = async (deps: FirstAttemptDeps, instanceId: string, webhook: WebhookEvent, url: string, target: DeliveryTarget): Promise<void> => {
  const { deliveryId } = target;
  const body = JSON.stringify(webhook);
  const scheduled = deliveryEvent('DeliveryScheduled', webhook.timestamp, {
    delivery_id: deliveryId,
    instance_id: instanceId,
    event_type: webhook.type,
    body,
    ...(target.replayOf ? { replay_of: target.replayOf } : {}),
  });
  const record = async (stream: string, events: NewEvent[]): Promise<void> => {
    await deps.deliveries.append(stream, events, { expectedVersion: 0, commandId: `record-${deliveryId}` }).catch((error: unknown) => {
      if (!isVersionConflict(error)) throw error;
    });
  };
  // After a crash, the event may already have been handled: then there is a record of it.
  if (target.redelivered && (await recorded(deps.deliveries, instanceId, deliveryId))) return;
  if (deps.breaker.waitMs(instanceId) > 0) return record(deliveryStream(instanceId, deliveryId), [scheduled]);
  const delivery = { ...(evolveDelivery(initialDeliveryState(), scheduled) as Delivery), body };
  const { events, next, delivered, at } = await deps.attempter.attempt(instanceId, delivery, url);
  if (delivered) return record(deliveredStream(instanceId, deliveryId), [scheduled, ...events]);
  await record(deliveryStream(instanceId, deliveryId), [scheduled, ...events]);
  if (next.kind === 'disable_webhook') {
    await disableWebhook(deps.events, instanceId, url, next.reason, at, `gone-${deliveryId}-1`);
  }
};

const recorded = async (deliveries: EventStore, instanceId: string, id: string): Promise<boolean> => {
  const [job, done] = await Promise.all([deliveries.version(deliveryStream(instanceId, id)), deliveries.version(deliveredStream(instanceId, id))]);
  return job > 0 || done > 0;
};
