import type { InstanceLifecycle } from '../validation';

export interface WebhookSettings {
  url: string;
  enabled: boolean;
  /** The webhook event types delivered; empty = all. */
  events: string[];
}

export interface ExistingInstance {
  exists: true;
  instanceId: string;
  account: string;
  createdAt: string;
  lifecycle: InstanceLifecycle;
  /** When the instance entered its current lifecycle state. */
  since: string;
  webhook: WebhookSettings | null;
  linkedNumber: string | null;
  lastDisconnectReason: string | null;
  /**
   * How many times the instance was reset. A platform connection is tied to the count it started under, so what a
   * connection from before a reset reports late is recognised as stale (see `decideConnectionFact`).
   */
  resets: number;
  /** When the instance's message content was last erased (its data key destroyed), or null. */
  dataErasedAt: string | null;
}

export type InstanceState = { exists: false } | ExistingInstance;

export const initialInstanceState = (): InstanceState => ({ exists: false });

/** The lifecycle states in which sends must fail at once: the device is gone or the link is broken. */
export const isInstanceBlocked = (state: ExistingInstance): boolean => state.lifecycle === 'logged_out' || state.lifecycle === 'failed';
