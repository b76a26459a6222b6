import { assertInstanceId, instanceStateCatchingUp, InstanceStates, notFound } from '@wagw/lib';
import { erasedByTime, type ErasureView } from './contentErasure';

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
export class EndpointDirectory extends InstanceStates implements ErasureView {
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

  /**
   * Whether a payload of `type` of an event at `eventTime` held content the instance's latest erasure destroyed: one
   * map lookup, as the directory folds the instance's stream (InstanceDataErased is recorded before
   * erase_instance_data answers, and reaches the directory as every webhook setting does).
   */
  contentErased(instanceId: string, type: string, eventTime: string): boolean {
    return erasedByTime(this.stateOf(instanceId)?.dataErasedAt ?? null, type, eventTime);
  }

  /**
   * The instance's endpoint, confirmed against the end of its stream when it looks off (no webhook, or disabled): the
   * directory may lag the stream (this replica just started, a webhook was just switched on), and what is done about
   * an endpoint that is off is for good (a retry dropped, a replay ended, events not delivered). Null when the stream
   * could not be read in time (`upTo`: no further than this sequence).
   */
  async confirmed(instanceId: string, timeoutMs: number, upTo?: number): Promise<Endpoint | undefined | null> {
    const known = this.get(instanceId);
    if (known?.enabled && known.url) return known;
    return (await this.reach(instanceId, timeoutMs, upTo)) ? this.get(instanceId) : null;
  }

  /**
   * Answers 404 for an unknown instance and for another account's (the same answer, so ids cannot be probed); 503 when
   * the instance's stream could not be read in time (what the callers go on to check, the webhook's settings, too).
   */
  async assertOwner(account: string, instanceId: string): Promise<void> {
    assertInstanceId(instanceId);
    if (!(await this.reach(instanceId, 2_000))) throw instanceStateCatchingUp();
    if (this.get(instanceId)?.account !== account) throw notFound('instance_not_found', 'Instance not found');
  }
}
