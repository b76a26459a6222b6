import { invalidArgument } from '../errors';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Delays before attempts 1..10 (Standard Webhooks-style, about 22 h in total). */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = [
  0,
  5 * SECOND,
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
];

const MAX_RETRY_AFTER_MS = 24 * HOUR;
const JITTER = 0.2;
const UNITS: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, min: MINUTE, h: HOUR };

/**
 * Parses `WEBHOOK_RETRY_SCHEDULE` (`0,100ms,5s,2m,1h`; a bare number is milliseconds) into delays; bad input stops
 * start-up with one message naming the variable, like every other one.
 */
export const parseSchedule = (text: string): number[] => {
  const parts = text.split(',').map((p) => p.trim());
  return parts.map((part) => {
    const match = /^(\d+)(ms|s|m|min|h)?$/.exec(part);
    if (!match)
      throw invalidArgument(
        'bad_config',
        `WEBHOOK_RETRY_SCHEDULE entry "${part}" is not a duration: give a comma-separated list like 0,5s,30s,2m,1h (ms, s, m or h; a bare number is milliseconds)`,
      );
    return Number(match[1]) * (UNITS[match[2] ?? 'ms'] ?? 1);
  });
};

/**
 * The delay before the next attempt after `attemptsMade` attempts (null: the schedule is spent), with ±20 %
 * jitter; a Retry-After is honoured by waiting at least that long (capped at 24 h).
 */
export const nextDelayMs = (schedule: readonly number[], attemptsMade: number, random: () => number, retryAfterMs?: number): number | null => {
  const base = schedule[attemptsMade];
  if (base === undefined) return null;
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * random()));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
};

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export const parseRetryAfter = (header: string | undefined, now: Date): number | undefined => {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * SECOND;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
};
