import { InstanceStates, instanceStateCatchingUp, type EventStore, type ExistingInstance, type Logger } from '@wagw/lib';

/** The order of an account's instances: oldest first (ids break ties). */
export const byCreation = (a: ExistingInstance, b: ExistingInstance): number =>
  a.createdAt.localeCompare(b.createdAt) || a.instanceId.localeCompare(b.instanceId);

/** The read model behind "list an account's instances" and the instance quota: every instance's state. */
export class InstanceDirectory extends InstanceStates {
  private readonly perAccount = new Map<string, number>();

  constructor(store: EventStore, logger: Logger) {
    super(store, logger);
    this.onChange(({ before, after }) => {
      if (!before.exists) this.perAccount.set(after.account, this.countOf(after.account) + 1);
    });
  }

  /**
   * A checkpoint's instances come back without a change each (no listener hears them): the counts are taken from them.
   * Without this, every restart from a checkpoint set every account's count to 0 and the quota let a whole quota more in.
   */
  override restore(body: string): void {
    super.restore(body);
    this.perAccount.clear();
    for (const instance of this.all()) this.perAccount.set(instance.account, this.countOf(instance.account) + 1);
  }

  /**
   * The account's instances, oldest first, after catching up with everything committed before the call; not caught up
   * in time: 503 (a list missing the instances created meanwhile would be read as the truth).
   */
  async list(account: string, timeoutMs: number): Promise<ExistingInstance[]> {
    if (!(await this.catchUp(timeoutMs))) throw instanceStateCatchingUp();
    return [...this.all()].filter((s) => s.account === account).sort(byCreation);
  }

  /** How many instances the account has, as far as the model has seen (no wait: the quota check on create). */
  countOf(account: string): number {
    return this.perAccount.get(account) ?? 0;
  }

  has(instanceId: string): boolean {
    return this.stateOf(instanceId) !== undefined;
  }
}
