import { isDeepStrictEqual } from 'node:util';
import { unavailable, type AppError } from '../errors';
import { CheckpointedProjection, type Commit, type EventStore, type FoldedModel } from '../eventStore';
import { ALL_INSTANCES_PATTERN, instanceStream } from '../events';
import type { Logger } from '../log';
import { instanceIdOf, type Checkpoint, type CheckpointStore } from '../nats';
import { evolveInstance, upcastInstanceEvent } from './decider';
import { initialInstanceState, type ExistingInstance, type InstanceState } from './state';

/**
 * The answer of a replica whose model of the instances did not catch up with the log in time (NATS electing a leader
 * after a node died, the replica just started): 503, for a refusal, a 404 or a list read from a stale model could be
 * wrong, and the client retries a 503.
 */
export const instanceStateCatchingUp = (): AppError =>
  unavailable('instance_state_catching_up', "This replica has not caught up with the instances' state yet; retry");

/** A commit applied to an instance: its state before and after, and the commit's sequence in the log. */
export interface InstanceChange {
  instanceId: string;
  before: InstanceState;
  after: ExistingInstance;
  sequence: number;
  /** When the commit's last event happened. */
  at: string;
}

/** Where in the log the instance's webhook was last switched on (or set), and off again (null: on since). */
export interface WebhookOnPeriod {
  from: number;
  until: number | null;
}

/** One instance in the model: its state, and where in the log its last reset was (sends accepted before it are void). */
export interface InstanceEntry {
  state: ExistingInstance;
  resetSequence: number;
  /** The webhook's last period on (null: never on): whether an event was raised while the webhook was on. */
  webhookOn: WebhookOnPeriod | null;
}

/** Whether the instance's webhook delivers: switched on, to a URL. */
const webhookOn = (state: InstanceState): boolean => state.exists && Boolean(state.webhook?.enabled && state.webhook.url);

/** The read model's name and version in checkpoints. Bump the version when `evolveInstance` changes what a state means. */
export const INSTANCE_STATES_MODEL = 'instance_states';
// 2: states carry `restriction` (InstanceRestricted, InstanceRestrictionLifted).
// 3: states carry `dataErasedAt` (InstanceDataErased).
// 4: a logout (InstanceLoggedOut) and a link to another number (InstanceLinked) end the restriction.
// 5: entries carry `webhookOn`, the webhook's last period on.
export const INSTANCE_STATES_VERSION = 5;

/**
 * Every instance's state, folded from the instance streams by the aggregate's own `evolve`: the one read model the
 * instance directory (instances), the registry (sessions) and the endpoint directory (webhooks) extend with their own
 * views, so they never disagree on what an event means. It starts from its checkpoint and catches up from there
 * instead of folding the whole log (`CheckpointedProjection`).
 */
export class InstanceStates implements FoldedModel {
  readonly model = INSTANCE_STATES_MODEL;
  readonly modelVersion = INSTANCE_STATES_VERSION;
  readonly pattern = ALL_INSTANCES_PATTERN;
  private entries = new Map<string, InstanceEntry>();
  private readonly projection: CheckpointedProjection;
  private readonly listeners = new Set<(change: InstanceChange) => void>();

  constructor(store: EventStore, logger: Logger) {
    this.projection = new CheckpointedProjection(store, this, logger);
  }

  /** Starts folding from the beginning of the log, without checkpoints. */
  start(): void {
    this.projection.start();
  }

  /** Starts from the stored checkpoint when it fits, else from the beginning, and keeps writing them. Answers where it started. */
  startFromCheckpoint(checkpoints: CheckpointStore, everyMs: number): Promise<number> {
    return this.projection.startFromCheckpoint(checkpoints, everyMs);
  }

  /** Stops folding; with checkpoints, writes the last one. */
  stop(): Promise<void> {
    return this.projection.stop();
  }

  /** The sequence of the last commit applied. */
  get position(): number {
    return this.projection.position;
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

  /**
   * Whether the instance's webhook was on at the event at `sequence` (raised after the webhook's last switch on and
   * before its switch off since, if any). Only the last period is kept: an event of an earlier one reads as "off".
   */
  webhookOnAt(instanceId: string, sequence: number): boolean {
    const period = this.entries.get(instanceId)?.webhookOn;
    return Boolean(period && period.from <= sequence && (period.until === null || sequence < period.until));
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

  /** The model as a checkpoint at its position. */
  snapshot(): Checkpoint {
    return this.projection.snapshot();
  }

  /** Takes a checkpoint (before starting). */
  restoreCheckpoint(checkpoint: Checkpoint): void {
    this.projection.restore(checkpoint);
  }

  /** Applies one commit through the projection's bookkeeping (a rebuild that reads pages itself uses it). */
  fold(commit: Commit): void {
    this.projection.fold(commit);
  }

  /** The entries in instance-id order, so equal models serialize alike. */
  serialize(): string {
    return JSON.stringify([...this.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  restore(body: string): void {
    this.entries = new Map(JSON.parse(body) as Array<[string, InstanceEntry]>);
  }

  /** Whether two models hold the same instances in the same states. */
  static sameEntries(a: Checkpoint, b: Checkpoint): boolean {
    return isDeepStrictEqual(JSON.parse(a.body), JSON.parse(b.body));
  }

  apply(commit: Commit): void {
    const instanceId = instanceIdOf(commit.stream);
    const entry = this.entries.get(instanceId);
    const before = entry?.state ?? initialInstanceState();
    let after = before;
    for (const event of commit.events) after = evolveInstance(after, upcastInstanceEvent(event));
    if (!after.exists) return;
    const reset = before.exists && after.resets !== before.resets;
    this.entries.set(instanceId, {
      state: after,
      resetSequence: reset ? commit.sequence : (entry?.resetSequence ?? 0),
      webhookOn: nextWebhookOn(entry?.webhookOn ?? null, webhookOn(before), webhookOn(after), commit.sequence),
    });
    for (const listener of this.listeners)
      listener({ instanceId, before, after, sequence: commit.sequence, at: commit.events[commit.events.length - 1]!.occurredAt });
  }
}

/** The webhook's last period on after a commit at `sequence` that found it `wasOn` and left it `isOn`. */
const nextWebhookOn = (period: WebhookOnPeriod | null, wasOn: boolean, isOn: boolean, sequence: number): WebhookOnPeriod | null => {
  if (!wasOn && isOn) return { from: sequence, until: null };
  if (wasOn && !isOn && period) return { from: period.from, until: sequence };
  return period;
};
