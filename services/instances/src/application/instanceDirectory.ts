import { InstanceStates, type EventStore, type ExistingInstance, type Logger } from '@wagw/lib';

/** The read model behind "list an account's instances": every instance's state (`InstanceStates`). */
export class InstanceDirectory {
  private readonly states: InstanceStates;

  constructor(store: EventStore, logger: Logger) {
    this.states = new InstanceStates(store, logger);
  }

  start(): void {
    this.states.start();
  }

  stop(): Promise<void> {
    return this.states.stop();
  }

  /** True once the model holds everything the store held when asked (bounded wait). */
  catchUp(timeoutMs: number): Promise<boolean> {
    return this.states.catchUp(timeoutMs);
  }

  /** The account's instances, oldest first, after catching up with everything committed before the call. */
  async list(account: string, timeoutMs: number): Promise<ExistingInstance[]> {
    await this.catchUp(timeoutMs);
    return [...this.states.all()]
      .filter((s) => s.account === account)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.instanceId.localeCompare(b.instanceId));
  }
}
