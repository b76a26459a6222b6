import { erasedPayloadData, isVersionConflict, type EventStore, type ExpectedVersion, type NewEvent } from '@wagw/lib';
import { decideDrop, WEBHOOK_OFF } from '../delivery/decisions';
import { deliveredStream, deliveryEvent, deliveryStream, type DeliveryScheduled } from '../delivery/events';
import { evolveDelivery, initialDeliveryState, type Delivery } from '../delivery/state';
import type { WebhookEvent } from '../routing/webhookEvent';
import type { Attempter } from './attempter';
import type { CircuitBreaker } from './circuitBreaker';
import { disableWebhook } from '../endpoints/disableWebhook';
import { holdsErasedContent, type ErasureView } from '../endpoints/contentErasure';

export interface FirstAttemptDeps {
  events: EventStore;
  deliveries: EventStore;
  attempter: Attempter;
  breaker: CircuitBreaker;
  /** The instance's latest erasure: payloads of events before it are not sent with their content (contentErasure). */
  erasure: ErasureView;
  /** The webhook settings' read model (the endpoint directory): a 410's switch-off is waited for there. */
  settings: { reach(instanceId: string, timeoutMs: number): Promise<boolean> };
}

/** How long a first attempt that switched the webhook off waits for the settings' read model to show it. */
const SWITCH_OFF_REACH_MS = 5_000;

/** Which delivery an attempt is for: a live event's own (`deliveryId` = its webhook-id), or a replay's (`replayOf`). */
export interface DeliveryTarget {
  deliveryId: string;
  replayOf?: string;
  /** The work item came again (a crash or a time-out before its ack): it may have been handled already. */
  redelivered: boolean;
}

/**
 * When the caller stops waiting for a first attempt (the router's lane: the endpoint is slow, or events pile up behind
 * it): `due` resolves then. The delivery is then recorded as pending for the deliverer, not before `until` (when the
 * attempt has surely ended: its start, the time-out and a margin), and the attempt's outcome is added when it ends.
 */
export interface Handoff {
  due: Promise<void>;
  until: Date;
}

/** Tries of a record that failed (NATS unavailable for a moment), waiting 250 ms, then twice as long each time. */
const RECORD_TRIES = 5;

/**
 * Records `events` on `stream` (a new delivery: expected version 0, unless given); its version after them, or null when
 * it was recorded already (or the record moved on: the deliverer reads it whole). Tried again here, in the lane, a few times: handing the event back instead let the instance's
 * next events go out first, and made the POST again.
 */
export const recordDelivery = async (
  deliveries: EventStore,
  stream: string,
  events: NewEvent[],
  commandId: string,
  expectedVersion: ExpectedVersion = 0,
): Promise<number | null> => {
  for (let tries = 1; ; tries++) {
    try {
      return (await deliveries.append(stream, events, { expectedVersion, commandId })).version;
    } catch (error) {
      if (isVersionConflict(error)) return null;
      if (tries >= RECORD_TRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** (tries - 1)));
    }
  }
};

/**
 * The record that opens a delivery; `notBefore`: the deliverer makes its first attempt no earlier. `erased`: without
 * its payload (null, `erased: true`), as a record of content erased since must be: written now, it would be sealed
 * under the instance's new key and read in the clear again.
 */
export const scheduledEvent = (
  instanceId: string,
  webhook: WebhookEvent,
  target: DeliveryTarget,
  { notBefore, erased = false, body }: { notBefore?: Date; erased?: boolean; /** `webhook` as JSON, when the caller has it already. */ body?: string } = {},
): DeliveryScheduled =>
  deliveryEvent('DeliveryScheduled', webhook.timestamp, {
    delivery_id: target.deliveryId,
    instance_id: instanceId,
    event_type: webhook.type,
    body: erased ? null : (body ?? JSON.stringify(webhook)),
    ...(erased ? { erased: true } : {}),
    ...(target.replayOf ? { replay_of: target.replayOf } : {}),
    ...(notBefore ? { not_before: notBefore.toISOString() } : {}),
  });

/**
 * A delivery recorded dropped (`reason`) at its turn, never sent: a live webhook whose content was erased before its
 * first attempt (`content_erased`, without its payload), or a replayed event after its webhook was switched off.
 */
export const recordDropped = async (
  deliveries: EventStore,
  instanceId: string,
  webhook: WebhookEvent,
  target: DeliveryTarget,
  { reason, erased }: { reason: string; erased: boolean },
): Promise<void> => {
  // Handled before a crash (delivered, or a job for the deliverer, which drops it): one record per delivery.
  if (target.redelivered && (await recorded(deliveries, instanceId, target.deliveryId))) return;
  const events = [scheduledEvent(instanceId, webhook, target, { erased }), ...decideDrop(reason, new Date().toISOString())];
  await recordDelivery(deliveries, deliveryStream(instanceId, target.deliveryId), events, `record-${target.deliveryId}`);
};

/** A live webhook whose content was erased before its first attempt: recorded dropped (`content_erased`), never sent. */
export const recordErasedDrop = (deliveries: EventStore, instanceId: string, webhook: WebhookEvent, target: DeliveryTarget): Promise<void> =>
  recordDropped(deliveries, instanceId, webhook, target, { reason: 'content_erased', erased: true });

/**
 * An event whose turn came after the webhook was switched off (a replay's, or a live one raised while it was on):
 * recorded as a dropped delivery of its own (as the deliverer drops one whose turn comes then), never sent, its payload
 * as it would have been sent. On the delivery's job stream, where a first attempt's failure would be: one record per
 * delivery either way.
 */
export const recordOffDrop = (
  deps: Pick<FirstAttemptDeps, 'deliveries' | 'erasure'>,
  instanceId: string,
  webhook: WebhookEvent,
  target: DeliveryTarget,
): Promise<void> => {
  const payload = asReplayed(deps.erasure.contentErased(instanceId, webhook.type, webhook.timestamp), webhook);
  return recordDropped(deps.deliveries, instanceId, payload, target, { reason: WEBHOOK_OFF, erased: false });
};

/** The event as a replay sends it: content erased since the event reads as erased history does (null, `erased`). */
export const asReplayed = (erased: boolean, webhook: WebhookEvent): WebhookEvent =>
  erased ? { ...webhook, data: erasedPayloadData(webhook.type, webhook.data) } : webhook;

/** How a first attempt ended for its caller: done (its outcome recorded), or handed off (`late`: its outcome's record). */
export type FirstAttemptResult = { kind: 'done' } | { kind: 'handed_off'; stream: string; version: number | null; late: Promise<void> };

/**
 * The first attempt of a delivery (live events and replays alike). A success is recorded on
 * `<instance>.delivered.<id>`; anything else becomes a job on `<instance>.delivery.<id>` for the deliverer (retries,
 * dead letters). Records are idempotent (command id and expected version 0), so work done again records nothing
 * twice (it may be POSTed twice: at least once). With a `handoff`, an attempt still running when it is due is
 * handed to the deliverer (see Handoff).
 */
export const firstAttempt = async (
  deps: FirstAttemptDeps,
  instanceId: string,
  webhook: WebhookEvent,
  url: string,
  target: DeliveryTarget,
  handoff?: Handoff,
): Promise<FirstAttemptResult> => {
  const { deliveryId } = target;
  const done = { kind: 'done' } as const;
  const commandId = `record-${deliveryId}`;
  // After a crash, the event may already have been handled: then there is a record of it.
  if (target.redelivered && (await recorded(deps.deliveries, instanceId, deliveryId))) return done;
  // Erased since the event (whatever was opened before): a live one is not sent; a replay sends the event as erased
  // history reads it (README, Erasure: replays keep every event, its content null).
  const erased = deps.erasure.contentErased(instanceId, webhook.type, webhook.timestamp);
  if (erased && !target.replayOf) {
    // Whether it was recorded before is known already (above).
    await recordErasedDrop(deps.deliveries, instanceId, webhook, { ...target, redelivered: false });
    return done;
  }
  const payload = asReplayed(erased, webhook);
  // Serialized once: the attempt's body and every record of it (this is the path of every live webhook).
  const body = JSON.stringify(payload);
  /** The opening record as of now: without its payload once an erasure came meanwhile (an attempt takes seconds). */
  const opening = (notBefore?: Date): DeliveryScheduled =>
    scheduledEvent(instanceId, payload, target, { notBefore, body, erased: holdsErasedContent(deps.erasure, instanceId, payload) });
  if (deps.breaker.waitMs(instanceId) > 0) {
    await recordDelivery(deps.deliveries, deliveryStream(instanceId, deliveryId), [opening()], commandId);
    return done;
  }
  const delivery = { ...(evolveDelivery(initialDeliveryState(), opening()) as Delivery), body };
  const attempt = deps.attempter.attempt(instanceId, delivery, url);
  /** A success on the delivered stream, anything else as a job for the deliverer; both opened by `opening()`. */
  const recordOutcome = async (outcome: Outcome): Promise<FirstAttemptResult> => {
    const stream = outcome.delivered ? deliveredStream(instanceId, deliveryId) : deliveryStream(instanceId, deliveryId);
    await recordDelivery(deps.deliveries, stream, [opening(), ...outcome.events], commandId);
    // A 410 switched the webhook off: the caller's next event (a lane's, a replay's) must find it off, though the
    // directory folds the switch-off a moment after it is stored (a replay POSTed one more event in 4 of 15 runs).
    if ((await disableWhenGone(deps, instanceId, url, deliveryId, outcome)) && !(await deps.settings.reach(instanceId, SWITCH_OFF_REACH_MS)))
      throw new Error('the webhook settings could not be read in time after a 410 switched the webhook off');
    return done;
  };
  const outcome = handoff ? await Promise.race([attempt, handoff.due.then(() => null)]) : await attempt;
  if (outcome) return await recordOutcome(outcome);
  // Slow: the delivery waits for the deliverer from `until` on, and the lane moves on now.
  const stream = deliveryStream(instanceId, deliveryId);
  let version: number | null;
  try {
    version = await recordDelivery(deps.deliveries, stream, [opening(handoff!.until)], commandId);
  } catch {
    // Not recorded (NATS unavailable): the lane waits for the attempt after all, and records it as without a handoff.
    return await recordOutcome(await attempt);
  }
  // Recorded before (the event came again): whoever recorded it has its outcome; nothing more to add.
  const late = version === null ? attempt.then(() => undefined) : recordLate(deps, instanceId, url, deliveryId, { stream, version }, attempt);
  return { kind: 'handed_off', stream, version, late };
};

type Outcome = Awaited<ReturnType<Attempter['attempt']>>;

/** Adds a handed-off attempt's outcome to its pending record, success or not: the deliverer reads it there at `until`. */
const recordLate = async (
  deps: FirstAttemptDeps,
  instanceId: string,
  url: string,
  deliveryId: string,
  record: { stream: string; version: number },
  attempt: Promise<Outcome>,
): Promise<void> => {
  const outcome = await attempt;
  // Tried a few times as the opening record is: a late outcome lost makes the deliverer POST again.
  await recordDelivery(deps.deliveries, record.stream, outcome.events, `late-${deliveryId}`, record.version);
  await disableWhenGone(deps, instanceId, url, deliveryId, outcome);
};

/** A 410 switches the instance's webhook off (a decision of the instance); says whether it was a 410. */
const disableWhenGone = async (
  deps: FirstAttemptDeps,
  instanceId: string,
  url: string,
  deliveryId: string,
  { delivered, next, at }: Outcome,
): Promise<boolean> => {
  if (delivered || next.kind !== 'disable_webhook') return false;
  await disableWebhook(deps.events, instanceId, url, next.reason, at, `gone-${deliveryId}-1`);
  return true;
};

/** Whether the delivery has a record already (of either kind). */
export const recorded = async (deliveries: EventStore, instanceId: string, id: string): Promise<boolean> => {
  const [job, done] = await Promise.all([deliveries.version(deliveryStream(instanceId, id)), deliveries.version(deliveredStream(instanceId, id))]);
  return job > 0 || done > 0;
};
