import { isDeepStrictEqual } from 'node:util';
import { Projection, type Commit, type EventStore } from '../eventStore';
import { ALL_INSTANCES_PATTERN, instanceStream } from '../events';
import type { Logger } from '../log';
import { instanceIdOf, type Checkpoint, type CheckpointStore } from '../nats';
import { Checkpointer, usableCheckpoint } from './checkpointer';
import { evolveInstance, upcastInstanceEvent } from './decider';
import { initialInstanceState, type ExistingInstance, type InstanceState } from './state';

/** A commit applied to an instance: its state before and after, and the commit's sequence in the log. */
export interface InstanceChange {
  instanceId: string;
  before: InstanceState;
  after: ExistingInstance;
  sequence: number;
}

/** One instance in the model: its state, and where in the log its last reset was (sends accepted before it are void). */
export interface InstanceEntry {
  state: ExistingInstance;
  resetSequence: number;
}

/** The read model's name and version in checkpoints. Bump the version when `evolveInstance` changes what a state means. */
export const INSTANCE_STATES_MODEL = 'instance_states';
export const INSTANCE_STATES_VERSION = 1;

/**
 * Every instance's state, folded from the instance streams by the aggregate's own `evolve`: the one read model the
 * instance directory (instances), the registry (sessions) and the endpoint directory (webhooks) extend with their own
 * views, so they never disagree on what an event means. It can start from a checkpoint (`snapshot`/`restore`,
 * `instanceCheckpoints.ts`) and catch up from there instead of folding the whole log.
 */
export class InstanceStates {
  private entries = new Map<string, InstanceEntry>();
  private readonly projection: Projection;
  private readonly listeners = new Set<(change: InstanceChange) => void>();
  /** The command id of the last commit applied: names the position in a checkpoint. */
  private lastCommandId = '';
  /** The sequence of the last commit folded (by the projection, or by a rebuild that reads pages itself). */
  private folded = 0;
  private checkpointer: Checkpointer | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly logger: Logger,
  ) {
    this.projection = new Projection(store, ALL_INSTANCES_PATTERN, (commit) => this.fold(commit), logger);
  }

  /** Starts folding after `position` (a restored checkpoint's) or from the beginning of the log. */
  start(position = 0): void {
    this.projection.start(position);
  }

  /**
   * Starts from the stored checkpoint when it is usable (else from the log's beginning), catches up from there, and
   * writes a checkpoint every `everyMs` while the log moves and a last one at `stop`. Answers where it started.
   */
  async startFromCheckpoint(checkpoints: CheckpointStore, everyMs: number): Promise<number> {
    const checkpoint = await checkpoints.load(INSTANCE_STATES_MODEL).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'reading the checkpoint failed; folding the log from its beginning');
      return null;
    });
    const usable = checkpoint !== null && (await usableCheckpoint(checkpoint, INSTANCE_STATES_VERSION, this.store, ALL_INSTANCES_PATTERN));
    if (checkpoint && !usable)
      this.logger.warn(
        { position: checkpoint.position, modelVersion: checkpoint.modelVersion },
        'the checkpoint does not fit this log or version; folding from the beginning',
      );
    if (usable) this.restore(checkpoint);
    const from = usable ? checkpoint.position : 0;
    this.start(from);
    this.checkpointer = new Checkpointer(this, checkpoints, this.logger, everyMs, from);
    this.checkpointer.start();
    return from;
  }

  /** Stops folding; with checkpoints, writes the last one. */
  async stop(): Promise<void> {
    await this.projection.stop();
    await this.checkpointer?.stop();
  }

  /** The sequence of the last commit applied. */
  get position(): number {
    return this.folded;
  }

  /** True once the model holds everything the store held when asked (bounded wait). */
  catchUp(timeoutMs: number): Promise<boolean> {
    return this.projection.catchUp(timeoutMs);
  }

  /** Makes sure the instance's state includes every commit of its stream (up to `sequence`): one indexed lookup. */
  reach(instanceId: string, timeoutMs: number, sequence?: number): Promise<boolean> {
    return this.projection.reachStream(instanceStream(instanceId), timeoutMs, sequence);
  }

  stateOf(instanceId: string): ExistingInstance | undefined {
    return this.entries.get(instanceId)?.state;
  }

  /** The log sequence of the instance's last reset, or 0. */
  resetSequenceOf(instanceId: string): number {
    return this.entries.get(instanceId)?.resetSequence ?? 0;
  }

  *all(): IterableIterator<ExistingInstance> {
    for (const entry of this.entries.values()) yield entry.state;
  }

  /** Called after every commit applied. */
  onChange(listener: (change: InstanceChange) => void): void {
    this.listeners.add(listener);
  }

  /** The model as a checkpoint: its entries in instance-id order, so equal models serialize alike. */
  snapshot(): Checkpoint {
    const entries = [...this.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return {
      model: INSTANCE_STATES_MODEL,
      modelVersion: INSTANCE_STATES_VERSION,
      position: this.folded,
      commandId: this.lastCommandId,
      body: JSON.stringify(entries),
    };
  }

  /** Takes a checkpoint's entries (before `start(checkpoint.position)`). */
  restore(checkpoint: Checkpoint): void {
    this.entries = new Map(JSON.parse(checkpoint.body) as Array<[string, InstanceEntry]>);
    this.lastCommandId = checkpoint.commandId;
    this.folded = checkpoint.position;
  }

  /** Whether two models hold the same instances in the same states. */
  static sameEntries(a: Checkpoint, b: Checkpoint): boolean {
    return isDeepStrictEqual(JSON.parse(a.body), JSON.parse(b.body));
  }

  /** Applies one commit of an instance stream (the projection's step; `rebuildInstanceStates` folds pages with it). */
  fold(commit: Commit): void {
    this.lastCommandId = commit.commandId;
    this.folded = commit.sequence;
    const instanceId = instanceIdOf(commit.stream);
    const entry = this.entries.get(instanceId);
    const before = entry?.state ?? initialInstanceState();
    let after = before;
    for (const event of commit.events) after = evolveInstance(after, upcastInstanceEvent(event));
    if (!after.exists) return;
    const reset = before.exists && after.resets !== before.resets;
    this.entries.set(instanceId, { state: after, resetSequence: reset ? commit.sequence : (entry?.resetSequence ?? 0) });
    for (const listener of this.listeners) listener({ instanceId, before, after, sequence: commit.sequence });
  }
}
