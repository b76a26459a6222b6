import { conflict, invalidArgument, parseIsoTime, WEBHOOK_EVENT_TYPE_NAMES } from '@wagw/lib';
import { replayEvent, type ReplayEvent } from './events';

const KNOWN_TYPES: readonly string[] = WEBHOOK_EVENT_TYPE_NAMES;

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
  const types = command.types ? command.types.split(',').map((t) => t.trim()) : [];
  const unknown = types.filter((t) => !KNOWN_TYPES.includes(t));
  if (unknown.length > 0 || (command.types && types.length === 0)) {
    throw invalidArgument('invalid_types', `Unknown webhook event type(s) ${unknown.join(', ')}; known: ${KNOWN_TYPES.join(', ')}`);
  }
  if (!webhookEnabled) throw conflict('webhook_disabled', 'The webhook is off; switch it on (/v1/webhook) before replaying events to it');
  return [replayEvent('ReplayRequested', command.now, { replay_id: command.replayId, instance_id: command.instanceId, since, until, types })];
};
