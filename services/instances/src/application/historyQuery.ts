import {
  INSTANCE_EVENT_VERSIONS,
  instanceHistoryPattern,
  invalidArgument,
  MESSAGE_EVENT_TYPES,
  messageStream,
  parseIsoTime,
  parseNameList,
  type Commit,
  type EventStore,
  type RecordedEvent,
} from '@wagw/lib';

export const MAX_HISTORY_PAGE = 1_000;
/** Commits one page reads at most while filters skip events: a page may come back short, with a cursor to go on. */
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
  const listed = parseNameList(filters.types, { known: HISTORY_EVENT_TYPES, code: 'invalid_types', noun: 'event type' });
  const since = filters.since ? parseIsoTime(filters.since, 'since').getTime() : null;
  const until = filters.until ? parseIsoTime(filters.until, 'until').getTime() : null;
  if (since !== null && until !== null && until < since) throw invalidArgument('invalid_time_range', 'until must not be before since');
  if (filters.messageId !== undefined && filters.messageId !== '' && !MESSAGE_ID.test(filters.messageId)) {
    throw invalidArgument('invalid_message_id', 'message_id must be a message id from send or the history');
  }
  const pattern = filters.messageId ? messageStream(instanceId, filters.messageId) : instanceHistoryPattern(instanceId);
  return { pattern, types: listed.length > 0 ? new Set(listed) : null, since, until };
};

/**
 * A history as pages of up to `pageSize` matching events, whole commits only, oldest first, read as one scan of the
 * store. The cursor is the sequence of a commit of this very history (0 = the start): one from another instance,
 * another filter's message or past the end is refused with 400, so a client never silently reads someone else's
 * position. A page also ends after MAX_SCANNED_COMMITS commits read (filters may skip them all): it then holds
 * fewer events, even none, with the cursor to go on.
 */
export async function* scanHistory(store: EventStore, filters: ParsedFilters, cursor: number, pageSize: number): AsyncGenerator<HistoryPage> {
  const matches = (event: RecordedEvent): boolean =>
    (!filters.types || filters.types.has(event.type)) && (filters.since === null || Date.parse(event.occurredAt) >= filters.since);
  let events: RecordedEvent[] = [];
  let scanned = 0;
  let first = true;
  for await (const commit of commitsFrom(store, filters.pattern, Math.max(1, cursor))) {
    // The first commit read must be the cursor's own (checked here, not by a read of its own).
    if (first && cursor > 0 && commit.sequence !== cursor) throw invalidCursor();
    first = false;
    if (filters.until !== null && commit.events.some((e) => Date.parse(e.occurredAt) > filters.until!)) break;
    const matching = commit.events.filter(matches);
    if ((events.length + matching.length > pageSize && events.length > 0) || scanned >= MAX_SCANNED_COMMITS) {
      yield { events, nextSequence: commit.sequence };
      events = [];
      scanned = 0;
    }
    events.push(...matching);
    scanned++;
  }
  if (first && cursor > 0) throw invalidCursor();
  yield { events, nextSequence: null };
}

/**
 * The commits from `from` to the end of the log, scan after scan: a scan stops where the log ended when it began,
 * and a scan kept open between pages (OpenScans) may have begun a while ago, so the end is only where a new scan
 * finds nothing more.
 */
async function* commitsFrom(store: EventStore, pattern: string, from: number): AsyncGenerator<Commit> {
  for (let next = from, found = true; found;) {
    found = false;
    for await (const commit of store.scanPattern(pattern, next)) {
      found = true;
      next = commit.sequence + 1;
      yield commit;
    }
  }
}

const invalidCursor = (): Error => invalidArgument('invalid_cursor', 'cursor is not a position in this history (another instance or filter, or past its end)');
