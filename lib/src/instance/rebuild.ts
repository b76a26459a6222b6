import { checkpointMisfit, type EventStore } from '../eventStore';
import { ALL_INSTANCES_PATTERN } from '../events';
import type { Logger } from '../log';
import type { Checkpoint, CheckpointStore } from '../nats';
import { INSTANCE_STATES_MODEL, INSTANCE_STATES_VERSION, InstanceStates } from './instanceStates';

/** How many commits one read asks for while rebuilding. */
const PAGE = 1_000;

/** The instance states folded from the beginning of the log up to `upTo` (inclusive), read page by page. */
export const rebuildInstanceStates = async (store: EventStore, logger: Logger, upTo: number): Promise<Checkpoint> => {
  const model = new InstanceStates(store, logger);
  for (let from: number | null = 1; from !== null && from <= upTo;) {
    const page = await store.readPattern(ALL_INSTANCES_PATTERN, from, PAGE);
    for (const commit of page.commits) if (commit.sequence <= upTo) model.fold(commit);
    from = page.nextSequence;
  }
  return model.snapshot();
};

export interface RebuildReport {
  model: string;
  /** The stored checkpoint's position, or null when none is stored. */
  position: number | null;
  /** Instances in the rebuilt model. */
  instances: number;
  /**
   * Why the services cannot restore the stored checkpoint (another model version, another log), or null: such a one
   * is not compared (the services fold from the beginning at their next start, whatever it holds).
   */
  unusable: string | null;
  /** True when the rebuilt model equals a usable checkpoint (false when none is stored, or it is unusable). */
  equal: boolean;
  /** Instance ids whose states differ (at most 20). */
  differing: string[];
  rebuilt: Checkpoint;
}

/** Rebuilds the instance states up to the stored checkpoint's position and compares them with it. */
export const compareWithCheckpoint = async (store: EventStore, checkpoints: CheckpointStore, logger: Logger): Promise<RebuildReport> => {
  const stored = await checkpoints.load(INSTANCE_STATES_MODEL);
  const misfit = stored ? await checkpointMisfit(stored, INSTANCE_STATES_VERSION, store, ALL_INSTANCES_PATTERN) : null;
  const theirs = stored && misfit === null ? entriesOf(stored) : null;
  // One that fits but does not restore is skipped by the services too (they fold from the beginning).
  const unusable = misfit ?? (stored && theirs === null ? "its body cannot be read as the model's entries" : null);
  const compared = theirs ? stored : null;
  // Up to a usable checkpoint's position (to compare), otherwise up to the log's end (what --write would store).
  const rebuilt = await rebuildInstanceStates(store, logger, compared?.position ?? (await store.version(ALL_INSTANCES_PATTERN)));
  const mine = entriesOf(rebuilt)!;
  const differing = theirs ? [...new Set([...mine.keys(), ...theirs.keys()])].filter((id) => mine.get(id) !== theirs.get(id)).slice(0, 20) : [];
  return {
    model: INSTANCE_STATES_MODEL,
    position: stored?.position ?? null,
    instances: mine.size,
    unusable,
    equal: compared !== null && rebuilt.position === compared.position && InstanceStates.sameEntries(rebuilt, compared),
    differing,
    rebuilt,
  };
};

/** A checkpoint's entries by instance id (each as JSON, to compare), or null when its body is not a list of entries. */
const entriesOf = (checkpoint: Checkpoint): Map<string, string> | null => {
  try {
    const entries: unknown = JSON.parse(checkpoint.body);
    if (!Array.isArray(entries)) return null;
    return new Map((entries as Array<[string, unknown]>).map(([id, entry]) => [id, JSON.stringify(entry)]));
  } catch {
    return null;
  }
};
