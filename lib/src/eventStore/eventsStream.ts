import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { ensureStream, type NatsHandle } from '../nats';

export interface EventsStreamSpec {
  name: string;
  /** The commits' subject prefix and the schedules' beside it: each takes `<prefix>.>`. */
  subjectPrefixes: readonly string[];
  /** How long a command id is remembered, so that a repeated append is dropped. */
  duplicateWindowMs: number;
  /** Whether commits may carry a time to live (scheduled work items, 2.11+). */
  commitTtl: boolean;
}

/**
 * The stream the event store keeps its commits in, created when missing or aligned with these settings: on disk,
 * kept (limits, never by interest), every commit of a subject kept, direct gets for reads, message schedules
 * (2.12; an older server drops the setting, which the caller reads back).
 */
export const ensureEventsStream = (nats: NatsHandle, spec: EventsStreamSpec): Promise<StreamConfig> =>
  ensureStream(nats, {
    name: spec.name,
    subjects: spec.subjectPrefixes.map((prefix) => `${prefix}.>`),
    allow_msg_schedules: true,
    ...(spec.commitTtl ? { allow_msg_ttl: true } : {}),
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    allow_direct: true,
    duplicate_window: nanos(spec.duplicateWindowMs),
    max_msgs_per_subject: -1,
  });
