import { ALL_INSTANCES_PATTERN, instanceIdOf, instanceStream, Projection, type Commit, type EventStore, type Logger } from '@wagw/lib';

/** What the sessions side needs to know of an instance from its events. */
export interface InstanceFacts {
  /** The owner (empty until InstanceCreated is applied). */
  account: string;
  linkedNumber: string | null;
  /** Why sends must fail now (logged out, failed), or null. */
  blockedReason: string | null;
  /** Sequence of the last reset: sends accepted before it are dropped. */
  resetSequence: number;
}

/** A read model of every instance's link facts, kept from the instance streams. */
export class InstanceRegistry {
  private readonly facts = new Map<string, InstanceFacts>();
  private readonly projection: Projection;
  private readonly resetListeners = new Set<(instanceId: string) => void>();

  constructor(store: EventStore, logger: Logger) {
    this.projection = new Projection(store, ALL_INSTANCES_PATTERN, (commit) => this.apply(commit), logger);
  }

  start(): void {
    this.projection.start();
  }

  stop(): Promise<void> {
    return this.projection.stop();
  }

  catchUp(timeoutMs: number): Promise<boolean> {
    return this.projection.catchUp(timeoutMs);
  }

  /** Makes sure the facts include every commit of the instance's stream (read-your-writes, one indexed lookup). */
  reach(instanceId: string, timeoutMs: number): Promise<boolean> {
    return this.projection.reachStream(instanceStream(instanceId), timeoutMs);
  }

  get(instanceId: string): InstanceFacts | undefined {
    return this.facts.get(instanceId);
  }

  /** Instances linked to a number and not logged out, failed or reset: the ones that should be connected. */
  linkedInstances(): string[] {
    const ids: string[] = [];
    for (const [id, facts] of this.facts) if (facts.linkedNumber && !facts.blockedReason) ids.push(id);
    return ids;
  }

  isLinked(instanceId: string): boolean {
    const facts = this.facts.get(instanceId);
    return Boolean(facts?.linkedNumber && !facts.blockedReason);
  }

  /** Called for every reset applied after start-up catch-up (the session logs the device out). */
  onReset(listener: (instanceId: string) => void): void {
    this.resetListeners.add(listener);
  }

  private apply(commit: Commit): void {
    const id = instanceIdOf(commit.stream);
    for (const event of commit.events) {
      const current = this.facts.get(id) ?? { account: '', linkedNumber: null, blockedReason: null, resetSequence: 0 };
      switch (event.type) {
        case 'InstanceCreated':
          this.facts.set(id, { ...current, account: String(event.data.account) });
          break;
        case 'InstanceLinked':
          this.facts.set(id, { ...current, linkedNumber: String(event.data.number), blockedReason: null });
          break;
        case 'InstanceConnected':
          this.facts.set(id, { ...current, blockedReason: null });
          break;
        case 'InstanceLoggedOut':
        case 'InstanceFailed':
          this.facts.set(id, {
            ...current,
            linkedNumber: event.type === 'InstanceLoggedOut' ? null : current.linkedNumber,
            blockedReason: String(event.data.reason),
          });
          break;
        case 'InstanceReset':
          this.facts.set(id, { ...current, linkedNumber: null, blockedReason: null, resetSequence: commit.sequence });
          for (const listener of this.resetListeners) listener(id);
          break;
        default:
          if (!this.facts.has(id)) this.facts.set(id, current);
      }
    }
  }
}
