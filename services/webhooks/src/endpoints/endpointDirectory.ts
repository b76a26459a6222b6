import { assertInstanceId, InstanceStates, notFound } from '@wagw/lib';

/** What the webhooks service needs to know of an instance: its owner and its webhook settings. */
export interface Endpoint {
  account: string;
  url: string | null;
  enabled: boolean;
  /** The webhook event types it takes; empty = all. */
  events: readonly string[];
  /** When the instance's content was last erased: deliveries made before then have no payload left to send. */
  dataErasedAt: string | null;
}

/** Every instance's webhook settings, as the instance aggregate's state has them. */
export class EndpointDirectory extends InstanceStates {
  get(instanceId: string): Endpoint | undefined {
    const state = this.stateOf(instanceId);
    return state
      ? {
          account: state.account,
          url: state.webhook?.url ?? null,
          enabled: state.webhook?.enabled ?? false,
          events: state.webhook?.events ?? [],
          dataErasedAt: state.dataErasedAt ?? null,
        }
      : undefined;
  }

  /** Answers 404 for an unknown instance and for another account's (the same answer, so ids cannot be probed). */
  async assertOwner(account: string, instanceId: string): Promise<void> {
    assertInstanceId(instanceId);
    await this.reach(instanceId, 2_000);
    if (this.get(instanceId)?.account !== account) throw notFound('instance_not_found', 'Instance not found');
  }
}
