import { INSTANCE_STATES, oneOf, WEBHOOK_EVENT_TYPE_NAMES, type InstanceMessage } from '@wagw/lib';

/** The HTTP shape of an instance (snake_case, nulls for absent values). */
export const instanceView = (i: InstanceMessage) => ({
  instance_id: i.instanceId,
  state: oneOf(INSTANCE_STATES, i.state, 'instance state'),
  created_at: i.createdAt,
  state_since: i.stateSince,
  webhook: i.webhook
    ? {
        url: i.webhook.url,
        enabled: i.webhook.enabled,
        events:
          i.webhook.events.length > 0 ? i.webhook.events.map((t) => oneOf(WEBHOOK_EVENT_TYPE_NAMES, t, 'webhook event type')) : [...WEBHOOK_EVENT_TYPE_NAMES],
      }
    : null,
  linked_number: i.linkedNumber || null,
  last_disconnect_reason: i.lastDisconnectReason || null,
});
