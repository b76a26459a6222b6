import type { Commit, NewEvent } from '@wagw/lib';

/**
 * The last delivery an instance's lane handed to the deliverer (its endpoint was slow), and when the deliverer may
 * first attempt it: while it waits, the instance's next events are recorded behind it (`SlowInstances`).
 */
export interface HandoverState {
  /** Epoch ms: the handed-off attempt has surely ended by then (the deliverer's `not_before`). */
  until: number;
  /** The delivery stream of the last delivery recorded for the deliverer. */
  stream: string;
  /** That stream's version as recorded; null when it was recorded before (its progress is not known). */
  version: number | null;
}

/**
 * Where an instance's handover is kept, on the WEBHOOKS store: one small commit per handover and per event recorded
 * behind it, the last one standing. Outside `<instance>.<kind>.<id>`: neither the deliverer (`*.delivery.>`), the
 * replayer (`*.replay.*`) nor a delivery listing (`<instance>.*.*`) reads it. It is never deleted: a marker whose
 * `until` is past and whose delivery had its first attempt says "nothing waits" (two reads on an instance's arrival).
 */
export const handoverStream = (instanceId: string): string => `${instanceId}.handover`;

const MARKED = 'HandoverMarked';

export const handoverMarked = (state: HandoverState): NewEvent => ({
  type: MARKED,
  schemaVersion: 1,
  occurredAt: new Date().toISOString(),
  data: { until: new Date(state.until).toISOString(), stream: state.stream, version: state.version },
});

/** The handover a marker commit holds; null for one this release cannot read (then nothing is taken to wait). */
export const handoverOf = (commit: Commit | undefined): HandoverState | null => {
  const event = commit?.events.find((e) => e.type === MARKED);
  if (!event) return null;
  const { until, stream, version } = event.data;
  const at = typeof until === 'string' ? Date.parse(until) : Number.NaN;
  if (!Number.isFinite(at) || typeof stream !== 'string' || !(version === null || typeof version === 'number')) return null;
  return { until: at, stream, version };
};
