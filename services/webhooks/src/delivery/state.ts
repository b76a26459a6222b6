import { asCurrentEvent, type RecordedEvent, type WebhookDeliveryStatus } from '@wagw/lib';
import type { AttemptOutcome, DeliveryEvent } from './events';

/** pending: waiting for an attempt or a retry; delivered; dead: dead-lettered (can be redelivered); dropped: the webhook was off. */
export type DeliveryStatus = WebhookDeliveryStatus;

export interface Attempt {
  attempt: number;
  /** When the attempt ended (its outcome known; it began `durationMs` before): the retry delay counts from here. */
  at: string;
  url: string;
  outcome: AttemptOutcome;
  status: number | null;
  error: string | null;
  durationMs: number;
  worker: string;
  /** When the next attempt is due after this one, in ms (null: none follows). */
  nextAttemptInMs: number | null;
}

export interface Delivery {
  exists: true;
  deliveryId: string;
  instanceId: string;
  eventType: string;
  /** The payload; null once the instance's content was erased (nothing left to send). */
  body: string | null;
  createdAt: string;
  /** A replay's delivery: the original event's webhook-id (its header on every attempt); null for the original. */
  replayOf: string | null;
  /** No first attempt before this (ISO time): set when the router handed the delivery over while its endpoint was slow. */
  notBefore: string | null;
  status: DeliveryStatus;
  reason: string | null;
  attempts: Attempt[];
  /** Attempts since the delivery was (re)scheduled: the retry schedule counts these. */
  attemptsInRound: number;
  /** How many times it was redelivered by request: each starts a new round. */
  round: number;
}

export type DeliveryState = { exists: false } | Delivery;

export const initialDeliveryState = (): DeliveryState => ({ exists: false });

export const evolveDelivery = (state: DeliveryState, event: DeliveryEvent): DeliveryState => {
  if (event.type === 'DeliveryScheduled') {
    return {
      exists: true,
      deliveryId: event.data.delivery_id,
      instanceId: event.data.instance_id,
      eventType: event.data.event_type,
      body: event.data.body,
      createdAt: event.occurredAt,
      replayOf: event.data.replay_of ?? null,
      notBefore: event.data.not_before ?? null,
      status: 'pending',
      reason: null,
      attempts: [],
      attemptsInRound: 0,
      round: 0,
    };
  }
  if (!state.exists) return state;
  switch (event.type) {
    case 'DeliveryAttempted': {
      const { attempt, url, outcome, status, error, duration_ms: durationMs, worker, next_attempt_in_ms: nextAttemptInMs } = event.data;
      return {
        ...state,
        status: outcome === 'delivered' ? 'delivered' : state.status,
        attempts: [...state.attempts, { attempt, at: event.occurredAt, url, outcome, status, error, durationMs, worker, nextAttemptInMs }],
        attemptsInRound: state.attemptsInRound + 1,
      };
    }
    case 'DeliveryDeadLettered':
      return { ...state, status: 'dead', reason: event.data.reason };
    case 'DeliveryDropped':
      return { ...state, status: 'dropped', reason: event.data.reason };
    case 'RedeliveryRequested':
      return { ...state, status: 'pending', reason: null, attemptsInRound: 0, round: event.data.round };
    default:
      return ignoreUnknown(event, state);
  }
};

const ignoreUnknown = (_event: never, state: DeliveryState): DeliveryState => state;

export const upcastDelivery = (event: RecordedEvent): DeliveryEvent => asCurrentEvent<DeliveryEvent>(event);

/**
 * When the next attempt may go out (epoch ms): the first not before `notBefore`, a later one after the last attempt's
 * retry delay; 0 when nothing holds it back.
 */
export const nextAttemptDue = (delivery: Delivery): number => {
  if (delivery.attempts.length === 0) return delivery.notBefore ? Date.parse(delivery.notBefore) : 0;
  const last = delivery.attempts.at(-1);
  if (!last || last.nextAttemptInMs === null || delivery.attemptsInRound === 0) return 0;
  return Date.parse(last.at) + last.nextAttemptInMs;
};

/** The webhook-id a receiver gets: the original event's, on a replay too (receivers that dedupe skip it). */
export const webhookIdOf = (delivery: Delivery): string => delivery.replayOf ?? delivery.deliveryId;

export const foldDelivery = (events: DeliveryEvent[]): DeliveryState => events.reduce(evolveDelivery, initialDeliveryState());
