import type { InstanceLifecycle } from '@wagw/lib';

/** The lifecycle states of an instance (`INSTANCE_STATES`). */
export type Lifecycle = InstanceLifecycle;

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
  lifecycle: Lifecycle;
  /** When the instance entered its current lifecycle state. */
  since: string;
  webhook: WebhookSettings | null;
  linkedNumber: string | null;
  lastDisconnectReason: string | null;
}

export type InstanceState = { exists: false } | ExistingInstance;

export const initialState = (): InstanceState => ({ exists: false });
