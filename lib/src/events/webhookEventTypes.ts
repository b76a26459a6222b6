import { invalidArgument } from '../errors';

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
} as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[keyof typeof WEBHOOK_EVENT_TYPES];

export const WEBHOOK_EVENT_TYPE_NAMES: readonly WebhookEventType[] = Object.values(WEBHOOK_EVENT_TYPES);

const isWebhookEventType = (value: string): value is WebhookEventType => WEBHOOK_EVENT_TYPE_NAMES.some((t) => t === value);

/**
 * A webhook's event filter (`set_webhook ... events=message.received,message.failed`): the listed types, deduplicated,
 * in the documented order; empty = every type. An unknown type is a 400 naming it.
 */
export const parseWebhookEventFilter = (value: string | readonly string[]): WebhookEventType[] => {
  const listed = (typeof value === 'string' ? value.split(',') : value).map((t) => t.trim()).filter((t) => t !== '');
  const unknown = listed.filter((t) => !isWebhookEventType(t));
  if (unknown.length > 0) {
    throw invalidArgument('invalid_events', `Unknown webhook event type(s): ${unknown.join(', ')}; known: ${WEBHOOK_EVENT_TYPE_NAMES.join(', ')}`);
  }
  return WEBHOOK_EVENT_TYPE_NAMES.filter((t) => listed.includes(t));
};

/** Whether a webhook with this filter (empty = all) takes events of this type. */
export const webhookWants = (filter: readonly string[] | undefined, type: WebhookEventType): boolean => !filter || filter.length === 0 || filter.includes(type);
