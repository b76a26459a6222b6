import type { EventStore } from '../eventStore';
import { ALL_INSTANCES_PATTERN } from '../events';
import type { Logger } from '../log';
import type { Checkpoint, CheckpointStore } from '../nats';
import { INSTANCE_STATES_MODEL, InstanceStates } from './instanceStates';

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
  /** True when the rebuilt model equals the checkpoint (false when none is stored). */
  equal: boolean;
  /** Instance ids whose states differ (at most 20). */
  differing: string[];
  rebuilt: Checkpoint;
}

/** Rebuilds the instance states up to the stored checkpoint's position and compares them with it. */
export const compareWithCheckpoint = async (store: EventStore, checkpoints: CheckpointStore, logger: Logger): Promise<RebuildReport> => {
  const stored = await checkpoints.load(INSTANCE_STATES_MODEL);
  const upTo = stored?.position ?? (await store.version(ALL_INSTANCES_PATTERN));
  const rebuilt = await rebuildInstanceStates(store, logger, upTo);
  const entries = (c: Checkpoint): Map<string, string> =>
    new Map((JSON.parse(c.body) as Array<[string, unknown]>).map(([id, entry]) => [id, JSON.stringify(entry)]));
  const mine = entries(rebuilt);
  const theirs = stored ? entries(stored) : new Map<string, string>();
  const differing = [...new Set([...mine.keys(), ...theirs.keys()])].filter((id) => mine.get(id) !== theirs.get(id)).slice(0, 20);
  return {
    model: INSTANCE_STATES_MODEL,
    position: stored?.position ?? null,
    instances: mine.size,
    equal: stored !== null && rebuilt.position === stored.position && InstanceStates.sameEntries(rebuilt, stored),
    differing,
    rebuilt,
  };
};
