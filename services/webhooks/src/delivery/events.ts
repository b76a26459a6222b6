/**
 * The events of one webhook delivery, on the WEBHOOKS store's stream `<instance_id>.delivery.<delivery_id>`:
 * its full record (every attempt's outcome), from which status, the dead-letter list and redelivery follow.
 */
interface Event<T extends string, D extends Record<string, unknown>> {
  type: T;
  schemaVersion: number;
  occurredAt: string;
  data: D;
}

export type AttemptOutcome = 'delivered' | 'retry' | 'gone';

/**
 * `replay_of`: a replay's delivery (GET /v1/replay_webhooks) carries the original event's webhook-id, sent as its own.
 * `not_before`: a delivery the router handed to the deliverer while the instance's endpoint was slow (`worker/router.ts`)
 * gets its first attempt from the deliverer no earlier than this (when the router's attempt ahead of it has surely ended).
 * `body` of a type with content (`message.received`) is sealed in the store (`lib/src/events/sealedFields.ts`): it reads
 * null, with `erased: true`, once the instance was erased.
 */
export type DeliveryScheduled = Event<
  'DeliveryScheduled',
  { delivery_id: string; instance_id: string; event_type: string; body: string | null; replay_of?: string; not_before?: string; erased?: boolean }
>;
export type DeliveryAttempted = Event<
  'DeliveryAttempted',
  {
    attempt: number;
    url: string;
    outcome: AttemptOutcome;
    status: number | null;
    error: string | null;
    duration_ms: number;
    next_attempt_in_ms: number | null;
    /** Which replica made the attempt. */
    worker: string;
  }
>;
export type DeliveryDeadLettered = Event<'DeliveryDeadLettered', { reason: string }>;
export type DeliveryDropped = Event<'DeliveryDropped', { reason: string }>;
/** `round` numbers the redeliveries (1 for the first), so a stale job for an earlier round is recognised. */
export type RedeliveryRequested = Event<'RedeliveryRequested', { round: number }>;

export type DeliveryEvent = DeliveryScheduled | DeliveryAttempted | DeliveryDeadLettered | DeliveryDropped | RedeliveryRequested;

export const deliveryEvent = <E extends DeliveryEvent>(type: E['type'], occurredAt: string, data: E['data']): E =>
  ({ type, schemaVersion: 1, occurredAt, data }) as E;

/** A delivery that needs the deliverer (retries, redelivery): its stream is the deliverer's job queue. */
export const deliveryStream = (instanceId: string, deliveryId: string): string => `${instanceId}.delivery.${deliveryId}`;
/** A delivery that succeeded at its first attempt: recorded where the deliverer does not listen. */
export const deliveredStream = (instanceId: string, deliveryId: string): string => `${instanceId}.delivered.${deliveryId}`;
/** Every delivery record of an instance, of both kinds. */
export const instanceDeliveriesPattern = (instanceId: string): string => `${instanceId}.*.*`;
/**
 * A delivery's next step came due: appended by the store's schedule (`EventStore.schedule`) on the delivery's `.due`
 * stream, where the deliverer listens and the delivery's record (its own stream) stays as it was. It was made for
 * attempt `attempt` (shown, not checked: the record decides what is due) of round `round` (an earlier round's marker
 * is stale); `deferrals` counts how often in a row an open circuit put the delivery off (each wait doubles).
 */
export type DeliveryDue = Event<'DeliveryDue', { round: number; attempt: number; deferrals: number }>;

export const deliveryDue = (occurredAt: string, data: DeliveryDue['data']): DeliveryDue => ({ type: 'DeliveryDue', schemaVersion: 1, occurredAt, data });

/** Where a delivery's due markers land: below its stream, so `instanceDeliveriesPattern` never lists them. */
export const dueStream = (delivery: string): string => `${delivery}.due`;
/** The delivery a job's stream is about: the stream itself, or the one a due marker hangs under. */
export const deliveryOfJob = (stream: string): string => stream.split('.').slice(0, 3).join('.');
/** The deliverer's jobs: every delivery stream and every due marker. */
export const ALL_DELIVERY_JOBS_PATTERN = '*.delivery.>';
