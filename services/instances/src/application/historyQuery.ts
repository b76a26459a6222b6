import {
  assertMessageId,
  HISTORY_EVENT_TYPES,
  instanceHistoryPattern,
  invalidArgument,
  MAX_PAGE_BYTES,
  messageStream,
  parseIsoTime,
  parseNameList,
  type Commit,
  type EventStore,
  type RecordedEvent,
} from '@wagw/lib';

export const MAX_HISTORY_PAGE = 1_000;
/** The JSON bytes a page (or an export chunk) holds before it ends: the lib's rule for every page that travels as a message. */
/** Commits one page reads at most while filters skip events: a page may come back short, with a cursor to go on. */
const MAX_SCANNED_COMMITS = 20_000;

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
  /** Each event as /v1/history shows it (eventJson), in the same order: what the page sends. */
  json: string[];
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
  const listed = parseNameList(filters.types, { known: HISTORY_EVENT_TYPES, field: 'types', code: 'invalid_types', noun: 'event type' });
  const since = filters.since ? parseIsoTime(filters.since, 'since').getTime() : null;
  const until = filters.until ? parseIsoTime(filters.until, 'until').getTime() : null;
  if (since !== null && until !== null && until < since) throw invalidArgument('invalid_time_range', 'until must not be before since');
  // The forms every release has given (m_… or in_…): `zzz` was taken as a message of no events.
  if (filters.messageId) assertMessageId(filters.messageId, 'message_id');
  const pattern = filters.messageId ? messageStream(instanceId, filters.messageId) : instanceHistoryPattern(instanceId);
  return { pattern, types: listed.length > 0 ? new Set(listed) : null, since, until };
};

/**
 * An event as /v1/history shows it, as JSON text: made once, as the page is read, since the page's size is that of
 * this text. Pages and exports travel to the gateway as this text (grpc/historyJson.ts): with one gRPC message per
 * event, re-parsed and re-serialized per event in the gateway, a 100,000-event history paged at 8.8k events/s and
 * exported at 19.4k while the store alone read 26.8k (`BENCH_ONLY=history npm run bench`, 2026-11-23, a busy machine).
 */
export const eventJson = (e: RecordedEvent): string =>
  JSON.stringify({ sequence: e.sequence, stream: e.stream, type: e.type, schema_version: e.schemaVersion, occurred_at: e.occurredAt, data: e.data });

/**
 * A history as pages of up to `pageSize` matching events and about MAX_PAGE_BYTES of their JSON (so a page may hold
 * fewer events than `pageSize`), whole commits only (a commit past either bound goes alone on its page), oldest
 * first, read as one scan of the store. The cursor is the sequence of a commit of this very history (0 = the
 * start): one from another instance, another filter's message or past the end is refused with 400, so a client
 * never silently reads someone else's position. A page also ends after MAX_SCANNED_COMMITS commits read (filters
 * may skip them all): it then holds fewer events, even none, with the cursor to go on.
 */
export async function* scanHistory(store: EventStore, filters: ParsedFilters, cursor: number, pageSize: number): AsyncGenerator<HistoryPage> {
  const matches = (event: RecordedEvent): boolean =>
    (!filters.types || filters.types.has(event.type)) && (filters.since === null || Date.parse(event.occurredAt) >= filters.since);
  let events: RecordedEvent[] = [];
  let json: string[] = [];
  let bytes = 0;
  let scanned = 0;
  let first = true;
  for await (const commit of commitsFrom(store, filters.pattern, Math.max(1, cursor))) {
    // The first commit read must be the cursor's own (checked here, not by a read of its own).
    if (first && cursor > 0 && commit.sequence !== cursor) throw invalidCursor();
    first = false;
    if (filters.until !== null && commit.events.some((e) => Date.parse(e.occurredAt) > filters.until!)) break;
    const matching = commit.events.filter(matches);
    const texts = matching.map(eventJson);
    // In UTF-8, as the page travels; one byte more each for the separator (a comma, or an export's newline).
    const size = texts.reduce((n, text) => n + Buffer.byteLength(text) + 1, 0);
    const full = events.length + matching.length > pageSize || bytes + size > MAX_PAGE_BYTES;
    if ((full && events.length > 0) || scanned >= MAX_SCANNED_COMMITS) {
      // The next page starts with this commit: nothing of it was handed out.
      yield { events, json, nextSequence: commit.sequence };
      events = [];
      json = [];
      bytes = 0;
      scanned = 0;
    }
    events.push(...matching);
    json.push(...texts);
    bytes += size;
    scanned++;
  }
  if (first && cursor > 0) throw invalidCursor();
  yield { events, json, nextSequence: null };
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
