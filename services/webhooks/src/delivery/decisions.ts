import { conflict, nextDelayMs } from '@wagw/lib';
import { deliveryEvent, type AttemptOutcome, type DeliveryEvent } from './events';
import type { Delivery } from './state';

/** What the worker does with the job after a decision. */
export type NextStep = { kind: 'done' } | { kind: 'retry'; delayMs: number } | { kind: 'disable_webhook'; reason: string };

export interface AttemptResult {
  url: string;
  worker: string;
  outcome: AttemptOutcome;
  status?: number;
  error?: string;
  durationMs: number;
  retryAfterMs?: number;
}

export interface RetryPolicy {
  schedule: readonly number[];
  random: () => number;
}

/**
 * Records an attempt and decides what follows: delivered -> done; 410 -> dead-lettered and the webhook switched
 * off; anything else -> retry on the schedule (Retry-After honoured), or dead-lettered once the schedule is spent.
 */
export const decideAfterAttempt = (
  delivery: Delivery,
  result: AttemptResult,
  policy: RetryPolicy,
  now: string,
): { events: DeliveryEvent[]; next: NextStep } => {
  const attempt = delivery.attempts.length + 1;
  const record = (nextAttemptInMs: number | null) =>
    deliveryEvent('DeliveryAttempted', now, {
      attempt,
      url: result.url,
      outcome: result.outcome,
      status: result.status ?? null,
      error: result.error ?? null,
      duration_ms: Math.round(result.durationMs),
      next_attempt_in_ms: nextAttemptInMs,
      worker: result.worker,
    });
  if (result.outcome === 'delivered') return { events: [record(null)], next: { kind: 'done' } };
  if (result.outcome === 'gone') {
    const reason = 'endpoint answered 410 Gone; the webhook was switched off';
    return { events: [record(null), deliveryEvent('DeliveryDeadLettered', now, { reason })], next: { kind: 'disable_webhook', reason } };
  }
  const delay = nextDelayMs(policy.schedule, delivery.attemptsInRound + 1, policy.random, result.retryAfterMs);
  if (delay === null) {
    const reason = `retries exhausted after ${delivery.attemptsInRound + 1} attempt(s)`;
    return { events: [record(null), deliveryEvent('DeliveryDeadLettered', now, { reason })], next: { kind: 'done' } };
  }
  return { events: [record(delay)], next: { kind: 'retry', delayMs: delay } };
};

/** A delivery's drop reason when the webhook is off (or was removed) at its turn. */
export const WEBHOOK_OFF = 'webhook disabled';

/** The webhook is off (or was removed) when the delivery's turn comes: it is dropped, not queued. */
export const decideDrop = (reason: string, now: string): DeliveryEvent[] => [deliveryEvent('DeliveryDropped', now, { reason })];

/**
 * Deliveries asked for (a redelivery, a replay) need a webhook that is on: to one that is off they would be dropped at
 * their turn (`decideDrop`), and a redelivered dead letter with them, for good. A 409 that says what to do instead.
 */
export const assertWebhookOn = (webhookEnabled: boolean, doing: string): void => {
  if (!webhookEnabled) throw conflict('webhook_disabled', `The webhook is off; switch it on (/v1/set_webhook with enable=true) before ${doing}`);
};

/** Only a dead-lettered delivery can be redelivered; it starts a new round of the retry schedule. */
export const decideRedelivery = (delivery: Delivery, now: string): DeliveryEvent[] => {
  if (delivery.status !== 'dead') {
    throw conflict('delivery_not_failed', `Delivery ${delivery.deliveryId} is ${delivery.status}; only failed deliveries can be redelivered`);
  }
  return [deliveryEvent('RedeliveryRequested', now, { round: delivery.round + 1 })];
};
