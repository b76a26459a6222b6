import {
  INSTANCE_EVENT_VERSIONS,
  instanceHistoryPattern,
  invalidArgument,
  MESSAGE_EVENT_TYPES,
  messageStream,
  parseIsoTime,
  type Commit,
  type EventStore,
  type RecordedEvent,
} from '@wagw/lib';

export const MAX_HISTORY_PAGE = 1_000;
/** Commits one request reads at most while filters skip events: a page may come back short, with a cursor to go on. */
const MAX_SCANNED_COMMITS = 20_000;
const MESSAGE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Every event type a history can hold. */
export const HISTORY_EVENT_TYPES: readonly string[] = [...Object.keys(INSTANCE_EVENT_VERSIONS), ...MESSAGE_EVENT_TYPES];

export interface HistoryFilters {
  /** Comma-separated event types; empty = all. */
  types?: string;
  /** ISO 8601: events from then on. */
  since?: string;
  /** ISO 8601: events up to then (the history stops at the first commit after it). */
  until?: string;
  /** One message's whole life. */
  messageId?: string;
}

export interface HistoryPage {
  events: RecordedEvent[];
  /** The sequence of the next commit of this history (pass it back as the cursor), or null at the end. */
  nextSequence: number | null;
}

interface ParsedFilters {
  pattern: string;
  types: Set<string> | null;
  since: number | null;
  until: number | null;
}

/** Checks the filters (400 with the field's name for a bad one) and picks the streams to read. */
export const parseFilters = (instanceId: string, filters: HistoryFilters): ParsedFilters => {
  const types = filters.types ? filters.types.split(',').map((t) => t.trim()) : null;
  const unknown = types?.filter((t) => !HISTORY_EVENT_TYPES.includes(t)) ?? [];
  if (types && (types.length === 0 || unknown.length > 0)) {
    throw invalidArgument('invalid_types', `Unknown event type(s) ${unknown.join(', ') || '(empty)'}; known: ${HISTORY_EVENT_TYPES.join(', ')}`);
  }
  const since = filters.since ? parseIsoTime(filters.since, 'since').getTime() : null;
  const until = filters.until ? parseIsoTime(filters.until, 'until').getTime() : null;
  if (since !== null && until !== null && until < since) throw invalidArgument('invalid_time_range', 'until must not be before since');
  if (filters.messageId !== undefined && filters.messageId !== '' && !MESSAGE_ID.test(filters.messageId)) {
    throw invalidArgument('invalid_message_id', 'message_id must be a message id from send or the history');
  }
  const pattern = filters.messageId ? messageStream(instanceId, filters.messageId) : instanceHistoryPattern(instanceId);
  return { pattern, types: types ? new Set(types) : null, since, until };
};

/**
 * One page of a history: up to `limit` matching events, whole commits only, oldest first. The cursor is the sequence
 * of a commit of this very history (0 = the start): one from another instance, another filter's message or past the
 * end is refused with 400, so a client never silently reads someone else's position.
 */
export const readHistory = async (store: EventStore, filters: ParsedFilters, cursor: number, limit: number): Promise<HistoryPage> => {
  const pageSize = Math.min(Math.max(limit, 1), MAX_HISTORY_PAGE);
  const matches = (event: RecordedEvent): boolean => {
    const time = Date.parse(event.occurredAt);
    return (!filters.types || filters.types.has(event.type)) && (filters.since === null || time >= filters.since);
  };
  // Unfiltered, a page of `pageSize` events needs at most that many commits, plus one to name the next cursor.
  const readSize = filters.types || filters.since !== null ? MAX_HISTORY_PAGE : pageSize + 1;
  const events: RecordedEvent[] = [];
  let from: number | null = Math.max(1, cursor);
  let scanned = 0;
  while (from !== null && scanned < MAX_SCANNED_COMMITS) {
    const page = await store.readPattern(filters.pattern, from, readSize);
    // The first read starts at the cursor: it must be a commit of this history (checked here, not by a read of its own).
    if (scanned === 0 && cursor > 0 && page.commits[0]?.sequence !== cursor) {
      throw invalidArgument('invalid_cursor', 'cursor is not a position in this history (another instance or filter, or past its end)');
    }
    const stop = takeCommits(page.commits, filters, matches, events, pageSize);
    if (stop !== undefined) return { events, nextSequence: stop };
    scanned += page.commits.length;
    from = page.nextSequence;
  }
  // The scan budget ran out with more to read: the next commit of this history is where to go on.
  return { events, nextSequence: from === null ? null : ((await store.readPattern(filters.pattern, from, 1)).commits[0]?.sequence ?? null) };
};

/** Takes whole commits into `events`; answers where the page ends (a sequence, or null at `until`), or undefined to read on. */
const takeCommits = (
  commits: Commit[],
  filters: ParsedFilters,
  matches: (e: RecordedEvent) => boolean,
  events: RecordedEvent[],
  pageSize: number,
): number | null | undefined => {
  for (const commit of commits) {
    if (filters.until !== null && commit.events.some((e) => Date.parse(e.occurredAt) > filters.until!)) return null;
    const matching = commit.events.filter(matches);
    if (events.length + matching.length > pageSize && events.length > 0) return commit.sequence;
    events.push(...matching);
  }
  return undefined;
};
