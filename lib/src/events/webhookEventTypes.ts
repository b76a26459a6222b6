import { parseNameList } from '../validation/nameList';

/** The webhook event types a receiver can get, by the domain event they come from (README "Webhooks"). */
export const WEBHOOK_EVENT_TYPES = {
  MessageReceived: 'message.received',
  MessageSent: 'message.sent',
  MessageDelivered: 'message.delivered',
  MessageRead: 'message.read',
  MessageFailed: 'message.failed',
  InstanceConnected: 'instance.connected',
  InstanceDisconnected: 'instance.disconnected',
  InstanceLoggedOut: 'instance.logged_out',
  InstanceFailed: 'instance.failed',
  InstanceReset: 'instance.reset',
  InstanceRestricted: 'instance.restricted',
  InstanceRestrictionLifted: 'instance.restriction_lifted',
  InstanceDataErased: 'instance.data_erased',
} as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[keyof typeof WEBHOOK_EVENT_TYPES];

export const WEBHOOK_EVENT_TYPE_NAMES: readonly WebhookEventType[] = Object.values(WEBHOOK_EVENT_TYPES);

/** The domain event types that make a webhook event. */
export const WEBHOOK_DOMAIN_TYPES: readonly string[] = Object.keys(WEBHOOK_EVENT_TYPES);

/**
 * Webhook event types listed in a query: `set_webhook ... events=` (error code `invalid_events`) or the `types` filter
 * of `/v1/events` and `/v1/replay_webhooks` (`invalid_types`). Absent or empty = every type; only commas or blanks, or
 * an unknown type, = 400 (`parseNameList`).
 */
export const parseWebhookEventTypes = (value: string | readonly string[] | undefined, field: 'events' | 'types'): WebhookEventType[] =>
  parseNameList(value, { known: WEBHOOK_EVENT_TYPE_NAMES, field, code: `invalid_${field}`, noun: 'webhook event type' });

/** A webhook's event filter (`set_webhook ... events=message.received,message.failed`); empty = every type. */
export const parseWebhookEventFilter = (value: string | readonly string[]): WebhookEventType[] => parseWebhookEventTypes(value, 'events');

/** Whether a webhook with this filter (empty = all) takes events of this type. */
export const webhookWants = (filter: readonly string[] | undefined, type: WebhookEventType): boolean => !filter || filter.length === 0 || filter.includes(type);
