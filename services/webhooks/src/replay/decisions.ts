import { invalidArgument, parseIsoTime, parseWebhookEventTypes } from '@wagw/lib';
import { assertWebhookOn } from '../delivery/decisions';
import { replayEvent, type ReplayEvent } from './events';

export interface ReplayCommand {
  replayId: string;
  instanceId: string;
  /** As the client sent them: ISO 8601 times and comma-separated webhook event types. */
  since: string;
  until: string;
  types: string;
  now: string;
}

/** A replay of past events to the current webhook: needs a webhook that is on (409) and a valid window and types (400). */
export const decideReplay = (command: ReplayCommand, webhookEnabled: boolean): ReplayEvent[] => {
  if (!command.since) throw invalidArgument('invalid_time', 'since is required: an ISO 8601 time with a time zone, e.g. 2026-11-23T10:00:00Z');
  const since = parseIsoTime(command.since, 'since').getTime();
  const until = command.until ? parseIsoTime(command.until, 'until').getTime() : null;
  if (until !== null && until < since) throw invalidArgument('invalid_time_range', 'until must not be before since');
  const types: string[] = parseWebhookEventTypes(command.types, 'types');
  assertWebhookOn(webhookEnabled, 'replaying events to it');
  return [replayEvent('ReplayRequested', command.now, { replay_id: command.replayId, instance_id: command.instanceId, since, until, types })];
};
