import { INSTANCE_STATES, oneOf, type InstanceMessage } from '@wagw/lib';

/** The HTTP shape of an instance (snake_case, nulls for absent values). */
export const instanceView = (i: InstanceMessage) => ({
  instance_id: i.instanceId,
  state: oneOf(INSTANCE_STATES, i.state, 'instance state'),
  created_at: i.createdAt,
  state_since: i.stateSince,
  webhook: i.webhook ? { url: i.webhook.url, enabled: i.webhook.enabled } : null,
  linked_number: i.linkedNumber || null,
  last_disconnect_reason: i.lastDisconnectReason || null,
});
