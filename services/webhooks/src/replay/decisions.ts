import { isDeepStrictEqual } from 'node:util';
import { conflict, invalidArgument, parseIsoTime, parseWebhookEventTypes } from '@wagw/lib';
import { assertWebhookOn } from '../delivery/decisions';
import { replayEvent, type ReplayEvent } from './events';
import type { ReplayState } from './state';

export interface ReplayCommand {
  replayId: string;
  instanceId: string;
  /** As the client sent them: ISO 8601 times and comma-separated webhook event types. */
  since: string;
  until: string;
  types: string;
  now: string;
}

/**
 * A replay of past events to the current webhook: needs a webhook that is on (409) and a valid window and types (400).
 * `state` is the replay already recorded under this id (a retry with the same Idempotency-Key): the same window
 * records nothing new (the client gets the same replay), another one is 409 idempotency_key_reused.
 */
export const decideReplay = (command: ReplayCommand, webhookEnabled: boolean, state: ReplayState = { exists: false }): ReplayEvent[] => {
  if (!command.since) throw invalidArgument('invalid_time', 'since is required: an ISO 8601 time with a time zone, e.g. 2026-11-23T10:00:00Z');
  const since = parseIsoTime(command.since, 'since').getTime();
  const until = command.until ? parseIsoTime(command.until, 'until').getTime() : null;
  if (until !== null && until < since) throw invalidArgument('invalid_time_range', 'until must not be before since');
  const types: string[] = parseWebhookEventTypes(command.types, 'types');
  if (state.exists) {
    const { request } = state;
    if (request.since === since && request.until === until && isDeepStrictEqual(request.types, types)) return [];
    throw conflict('idempotency_key_reused', 'This Idempotency-Key was used for another replay of this instance; use a new key for a new replay');
  }
  assertWebhookOn(webhookEnabled, 'replaying events to it');
  return [replayEvent('ReplayRequested', command.now, { replay_id: command.replayId, instance_id: command.instanceId, since, until, types })];
};

/** Why a replay stopped sending: its webhook was found switched off (or removed) at an event's turn. */
export const WEBHOOK_SWITCHED_OFF = 'the webhook was switched off';

/**
 * The webhook was found off at an event's turn: the replay stops sending, for good (switched on again meanwhile or
 * not), and its remaining events are recorded as dropped deliveries, so the listing shows what was not replayed and
 * a new replay can send it. Once: a replay stopped already (resumed after a crash) goes on dropping.
 */
export const decideStop = (state: ReplayState, now: string): ReplayEvent[] =>
  !state.exists || state.finished || state.stopped !== null ? [] : [replayEvent('ReplayStopped', now, { reason: WEBHOOK_SWITCHED_OFF })];

/** How far a replay got: every commit before `nextSequence` is done (its deliveries recorded, dropped ones too). */
export const decideProgress = (state: ReplayState, progress: { nextSequence: number; replayed: number; dropped: number }, now: string): ReplayEvent[] =>
  !state.exists || state.finished
    ? []
    : [replayEvent('ReplayProgressed', now, { next_sequence: progress.nextSequence, replayed: progress.replayed, dropped: progress.dropped })];

/** The replay read the instance's events to its end (or `until`): finished, stopped (its reason) or not. */
export const decideFinish = (state: ReplayState, counts: { replayed: number; dropped: number }, now: string): ReplayEvent[] =>
  !state.exists || state.finished ? [] : [replayEvent('ReplayFinished', now, { replayed: counts.replayed, dropped: counts.dropped, reason: state.stopped })];
