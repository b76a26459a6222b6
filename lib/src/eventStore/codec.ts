import { SEALED_KEY } from '../events/sealedFields';
import { upcastEvent } from '../events/upcasters';
import type { Commit, NewEvent, RecordedEvent } from './port';

/** The stored body of one commit. Short keys keep messages small; `v` is the event's schema version. */
interface StoredEvent {
  type: string;
  v: number;
  at: string;
  data: Record<string, unknown>;
}

export const encodeCommit = (events: NewEvent[]): string =>
  JSON.stringify({
    events: events.map((e): StoredEvent => ({ type: e.type, v: e.schemaVersion, at: e.occurredAt, data: e.data })),
  });

export const decodeCommit = (stream: string, sequence: number, commandId: string, body: string): Commit => {
  const parsed = JSON.parse(body) as { events: StoredEvent[] };
  // Every event is read in its type's current schema version (the stored one stays as it was written). An event
  // with sealed content is upcast once it is opened (`SealedEventStore`): upcasters see its content, or its erasure.
  const events = parsed.events.map((e): RecordedEvent => ({
    type: e.type,
    ...(SEALED_KEY in e.data ? { schemaVersion: e.v, data: e.data } : upcastEvent(e.type, e.v, e.data)),
    occurredAt: e.at,
    stream,
    sequence,
  }));
  return { stream, sequence, commandId, events };
};
