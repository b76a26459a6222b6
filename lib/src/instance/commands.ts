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

/**
 * What a platform connection reported, as the sessions service records it. Never the QR code itself: it is a
 * secret and stays in the session's memory.
 */
export type ConnectionFact =
  | { type: 'connecting' }
  | { type: 'qr' }
  | { type: 'connected'; number: string }
  | { type: 'disconnected'; reason: string }
  | { type: 'logged_out'; reason: string }
  | { type: 'failed'; reason: string }
  /** WhatsApp refuses the account's sends (the 463 class of answers); `until` when WhatsApp said when it ends. */
  | { type: 'restricted'; until: string | null }
  /** WhatsApp lifted the restriction. */
  | { type: 'unrestricted' };

/** Sessions: record a connection fact. `resets` is the instance's reset count when the connection started. */
export interface RecordConnectionFact {
  type: 'RecordConnectionFact';
  fact: ConnectionFact;
  resets: number;
  now: string;
}

/** Webhooks: the endpoint at `url` answered 410 Gone, so deliveries to it stop. */
export interface DisableWebhook {
  type: 'DisableWebhook';
  url: string;
  reason: string;
  now: string;
}

/**
 * Erasure: the instance's data key was destroyed (by the caller, before this command: the key lives outside the log).
 * `keyDestroyed`: there was a key to destroy, i.e. content was sealed since the last erasure.
 */
export interface EraseInstanceData {
  type: 'EraseInstanceData';
  account: string;
  keyDestroyed: boolean;
  /** The client gave an Idempotency-Key: an erasure that finds nothing to erase is recorded all the same, for its retries. */
  keyed: boolean;
  now: string;
}

export type InstanceCommand = CreateInstance | ConfigureWebhook | ResetInstance | RecordConnectionFact | DisableWebhook | EraseInstanceData;
