/**
 * The events of one webhook replay, on the WEBHOOKS store's stream `<instance_id>.replay.<replay_id>`: what was
 * asked for and how far the replayer got, so a replay survives a crash and resumes where its last progress says.
 */
interface Event<T extends string, D extends Record<string, unknown>> {
  type: T;
  schemaVersion: number;
  occurredAt: string;
  data: D;
}

export type ReplayRequested = Event<
  'ReplayRequested',
  {
    replay_id: string;
    instance_id: string;
    /** Epoch ms: events from then on; `until` null = up to the log's end when the replay starts. */
    since: number;
    until: number | null;
    /** Webhook event types (message.received, ...); empty = all. */
    types: string[];
  }
>;
/**
 * The replay went past every commit before `next_sequence`; `replayed` counts the deliveries attempted so far,
 * `dropped` those recorded as dropped (absent in records from before drops were recorded: 0).
 */
export type ReplayProgressed = Event<'ReplayProgressed', { next_sequence: number; replayed: number; dropped?: number }>;
/**
 * The webhook was found switched off (or removed) at an event's turn: from there on the replay sends nothing, and
 * records each of its remaining events as a dropped delivery, as any delivery whose turn comes after a switch-off.
 */
export type ReplayStopped = Event<'ReplayStopped', { reason: string }>;
/** Done (`reason` null) or stopped (`reason`: the webhook was switched off meanwhile; `dropped` of its events). */
export type ReplayFinished = Event<'ReplayFinished', { replayed: number; dropped?: number; reason: string | null }>;

export type ReplayEvent = ReplayRequested | ReplayProgressed | ReplayStopped | ReplayFinished;

export const replayEvent = <E extends ReplayEvent>(type: E['type'], occurredAt: string, data: E['data']): E =>
  ({ type, schemaVersion: 1, occurredAt, data }) as E;

export const replayStream = (instanceId: string, replayId: string): string => `${instanceId}.replay.${replayId}`;
export const ALL_REPLAYS_PATTERN = '*.replay.*';
/** A replayed event's delivery: its own record (the original one stays as it is), its webhook-id the original's. */
export const replayDeliveryId = (replayId: string, webhookId: string): string => `${replayId}_${webhookId}`;
