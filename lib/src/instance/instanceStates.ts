import { Projection, type Commit, type EventStore } from '../eventStore';
import { ALL_INSTANCES_PATTERN, instanceStream } from '../events';
import type { Logger } from '../log';
import { instanceIdOf } from '../nats';
import { evolveInstance, upcastInstanceEvent } from './decider';
import { initialInstanceState, type ExistingInstance, type InstanceState } from './state';

/** A commit applied to an instance: its state before and after, and the commit's sequence in the log. */
export interface InstanceChange {
  instanceId: string;
  before: InstanceState;
  after: ExistingInstance;
  sequence: number;
}

/**
 * Every instance's state, folded from the instance streams by the aggregate's own `evolve`: the one read model the
 * instance directory (instances), the registry (sessions) and the endpoint directory (webhooks) extend with their own
 * views, so they never disagree on what an event means.
 */
export class InstanceStates {
  private readonly states = new Map<string, ExistingInstance>();
  private readonly projection: Projection;
  private readonly listeners = new Set<(change: InstanceChange) => void>();

  constructor(store: EventStore, logger: Logger) {
    this.projection = new Projection(store, ALL_INSTANCES_PATTERN, (commit) => this.apply(commit), logger);
  }

  start(): void {
    this.projection.start();
  }

  stop(): Promise<void> {
    return this.projection.stop();
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
    return this.states.get(instanceId);
  }

  all(): IterableIterator<ExistingInstance> {
    return this.states.values();
  }

  /** Called after every commit applied (after start-up catch-up too). */
  onChange(listener: (change: InstanceChange) => void): void {
    this.listeners.add(listener);
  }

  private apply(commit: Commit): void {
    const instanceId = instanceIdOf(commit.stream);
    const before = this.states.get(instanceId) ?? initialInstanceState();
    let after = before;
    for (const event of commit.events) after = evolveInstance(after, upcastInstanceEvent(event));
    if (!after.exists) return;
    this.states.set(instanceId, after);
    for (const listener of this.listeners) listener({ instanceId, before, after, sequence: commit.sequence });
  }
}
