import { ALL_INSTANCES_PATTERN, instanceIdOf, Projection, type Commit, type EventStore, type Logger } from '@wagw/lib';
import { evolve, upcast } from '../instance';
import type { ExistingInstance, InstanceState } from '../instance';

/** The order of an account's instances: oldest first (ids break ties). */
export const byCreation = (a: ExistingInstance, b: ExistingInstance): number =>
  a.createdAt.localeCompare(b.createdAt) || a.instanceId.localeCompare(b.instanceId);

/** The read model behind "list an account's instances": every instance's state, built from the event stream. */
export class InstanceDirectory {
  private readonly instances = new Map<string, InstanceState>();
  private readonly perAccount = new Map<string, number>();
  private readonly projection: Projection;

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

  /** The account's instances, oldest first, after catching up with everything committed before the call. */
  async list(account: string, timeoutMs: number): Promise<ExistingInstance[]> {
    await this.catchUp(timeoutMs);
    return [...this.instances.values()].filter((s): s is ExistingInstance => s.exists && s.account === account).sort(byCreation);
  }

  /** How many instances the account has, as far as the model has seen (no wait: the quota check on create). */
  countOf(account: string): number {
    return this.perAccount.get(account) ?? 0;
  }

  has(instanceId: string): boolean {
    return this.instances.get(instanceId)?.exists === true;
  }

  private apply(commit: Commit): void {
    const id = instanceIdOf(commit.stream);
    const before = this.instances.get(id) ?? { exists: false };
    let state = before;
    for (const event of commit.events) state = evolve(state, upcast(event));
    this.instances.set(id, state);
    if (!before.exists && state.exists) this.perAccount.set(state.account, this.countOf(state.account) + 1);
  }
}
