import { InstanceStates, type ExistingInstance } from '@wagw/lib';

/** The read model behind "list an account's instances": every instance's state. */
export class InstanceDirectory extends InstanceStates {
  /** The account's instances, oldest first, after catching up with everything committed before the call. */
  async list(account: string, timeoutMs: number): Promise<ExistingInstance[]> {
    await this.catchUp(timeoutMs);
    return [...this.all()]
      .filter((s) => s.account === account)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.instanceId.localeCompare(b.instanceId));
  }
}
