import type { RecordedEvent } from '@wagw/lib';

/**
 * An event as /v1/history shows it, as JSON text. Pages and exports travel to the gateway as this text, made once
 * here: with one gRPC message per event, re-parsed and re-serialized per event in the gateway, a 100,000-event
 * history paged at 8.8k events/s and exported at 19.4k while the store alone read 26.8k (`BENCH_ONLY=history npm
 * run bench`, 2026-11-23, a busy machine).
 */
const eventJson = (e: RecordedEvent): string =>
  JSON.stringify({ sequence: e.sequence, stream: e.stream, type: e.type, schema_version: e.schemaVersion, occurred_at: e.occurredAt, data: e.data });

/** A page's events as a JSON array. */
export const eventsJson = (events: RecordedEvent[]): string => `[${events.map(eventJson).join(',')}]`;

/** Events as NDJSON: one line each, each ending in a newline. */
export const eventsNdjson = (events: RecordedEvent[]): Buffer => Buffer.from(events.map((e) => `${eventJson(e)}\n`).join(''));
