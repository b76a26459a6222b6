/**
 * The events of the Instance aggregate, stored on stream `<instance_id>.instance`. They are the contract between
 * the services that append them (instances, sessions) and those that read them (projections, webhooks, history).
 * Facts in the past tense; payloads never hold secrets (tokens, QR strings, keys, signing secrets).
 */
export const instanceStream = (instanceId: string): string => `${instanceId}.instance`;

/** Every stream of one instance (its own and its messages'), for history and audit. */
export const instanceHistoryPattern = (instanceId: string): string => `${instanceId}.>`;

/** The instance streams of every instance. */
export const ALL_INSTANCES_PATTERN = '*.instance';

/** Every stream of every instance (the whole event log), for account-wide live events. */
export const ALL_HISTORIES_PATTERN = '>';

interface Event<T extends string, D extends Record<string, unknown>> {
  type: T;
  schemaVersion: number;
  occurredAt: string;
  data: D;
}

export type InstanceCreated = Event<'InstanceCreated', { instance_id: string; account: string }>;
/** `events`: the webhook event types delivered (absent = all; recorded only when a filter is set). */
export type WebhookConfigured = Event<'WebhookConfigured', { url: string; enabled: boolean; events?: string[] }>;
/** The webhooks service switched the webhook off because the endpoint answered 410 Gone. */
export type WebhookDisabled = Event<'WebhookDisabled', { reason: string }>;
export type InstanceReset = Event<'InstanceReset', Record<string, never>>;
/** A platform connection is starting. */
export type InstanceConnecting = Event<'InstanceConnecting', Record<string, never>>;
/** A QR code is waiting to be scanned (its content is a secret and is not recorded). */
export type InstanceQrIssued = Event<'InstanceQrIssued', Record<string, never>>;
/** Every QR code of a connection attempt expired unscanned: the instance is back to waiting for get_qrcode. */
export type InstanceQrExpired = Event<'InstanceQrExpired', Record<string, never>>;
/** The phone scanned the QR code: the instance is linked to `number`. */
export type InstanceLinked = Event<'InstanceLinked', { number: string }>;
export type InstanceConnected = Event<'InstanceConnected', Record<string, never>>;
/** The connection dropped; `reconnecting`: the gateway reconnects on its own (always so since v2; see upcasters.ts). */
export type InstanceDisconnected = Event<'InstanceDisconnected', { reason: string; reconnecting: boolean }>;
export type InstanceLoggedOut = Event<'InstanceLoggedOut', { reason: string }>;
export type InstanceFailed = Event<'InstanceFailed', { reason: string }>;
/** WhatsApp refuses the account's sends (it answered 463); `until`: when it ends, if WhatsApp said (null: unknown). */
export type InstanceRestricted = Event<'InstanceRestricted', { until: string | null }>;
/** WhatsApp lifted the account's restriction before its end (or one whose end was unknown). */
export type InstanceRestrictionLifted = Event<'InstanceRestrictionLifted', Record<string, never>>;
/** The instance's data key was destroyed: message content stored until then reads as erased (`SEALED_FIELDS`). */
export type InstanceDataErased = Event<'InstanceDataErased', Record<string, never>>;
/**
 * An erasure under an Idempotency-Key found nothing stored since the latest erasure, so it destroyed nothing. Recorded
 * only so that a retry of it finds it and does not erase what arrived in between; it changes no state and makes no
 * webhook (nothing was erased: `data_erased_at` stays the latest InstanceDataErased).
 */
export type InstanceDataAlreadyErased = Event<'InstanceDataAlreadyErased', Record<string, never>>;

export type InstanceEvent =
  | InstanceCreated
  | WebhookConfigured
  | WebhookDisabled
  | InstanceReset
  | InstanceConnecting
  | InstanceQrIssued
  | InstanceQrExpired
  | InstanceLinked
  | InstanceConnected
  | InstanceDisconnected
  | InstanceLoggedOut
  | InstanceFailed
  | InstanceRestricted
  | InstanceRestrictionLifted
  | InstanceDataErased
  | InstanceDataAlreadyErased;

export type InstanceEventType = InstanceEvent['type'];

/** The current schema version of each event type; readers upcast older versions to it. */
export const INSTANCE_EVENT_VERSIONS: Record<InstanceEventType, number> = {
  InstanceCreated: 1,
  WebhookConfigured: 1,
  WebhookDisabled: 1,
  InstanceReset: 1,
  InstanceConnecting: 1,
  InstanceQrIssued: 1,
  InstanceQrExpired: 1,
  InstanceLinked: 1,
  InstanceConnected: 1,
  InstanceDisconnected: 2,
  InstanceLoggedOut: 1,
  InstanceFailed: 1,
  InstanceRestricted: 1,
  InstanceRestrictionLifted: 1,
  InstanceDataErased: 1,
  InstanceDataAlreadyErased: 1,
};

/** Builds an event of the current schema version. */
export const instanceEvent = <E extends InstanceEvent>(type: E['type'], occurredAt: string, data: E['data']): E =>
  ({ type, schemaVersion: INSTANCE_EVENT_VERSIONS[type], occurredAt, data }) as E;
