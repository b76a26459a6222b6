/** Commands carry everything a decision needs, the clock included, so the decider stays pure. */
export interface CreateInstance {
  type: 'CreateInstance';
  instanceId: string;
  account: string;
  now: string;
}

export interface ConfigureWebhook {
  type: 'ConfigureWebhook';
  account: string;
  url: string;
  enabled: boolean;
  /** Webhook event types to deliver; absent or empty = all. */
  events?: string[];
  now: string;
}

export interface ResetInstance {
  type: 'ResetInstance';
  account: string;
  now: string;
}

export type InstanceCommand = CreateInstance | ConfigureWebhook | ResetInstance;
