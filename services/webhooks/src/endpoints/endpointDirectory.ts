import { InstanceStates, type EventStore, type Logger } from '@wagw/lib';

/** What the webhooks service needs to know of an instance: its owner and its webhook settings. */
export interface Endpoint {
  account: string;
  url: string | null;
  enabled: boolean;
}

/** Every instance's webhook settings, as the instance aggregate's state has them (`InstanceStates`). */
export class EndpointDirectory {
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

  get(instanceId: string): Endpoint | undefined {
    const state = this.states.get(instanceId);
    return state ? { account: state.account, url: state.webhook?.url ?? null, enabled: state.webhook?.enabled ?? false } : undefined;
  }

  /** Makes sure the instance's settings include every commit of its stream up to `sequence`. */
  reach(instanceId: string, sequence: number, timeoutMs: number): Promise<boolean> {
    return this.states.reach(instanceId, timeoutMs, sequence);
  }

  catchUp(timeoutMs: number): Promise<boolean> {
    return this.states.catchUp(timeoutMs);
  }
}
