import { INSTANCE_STATES, oneOf, WEBHOOK_EVENT_TYPE_NAMES, type InstanceMessage, type SendUsageMessage } from '@wagw/lib';

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
  restricted: i.restriction ? { since: i.restriction.since, until: i.restriction.until || null } : null,
  data_erased_at: i.dataErasedAt || null,
});

const quota = (used: number, max: number) => ({ used, max: max > 0 ? max : null });

/** The quotas `status` shows: the account's instances (instances service) and the instance's sends (sessions). */
export const quotasView = (instance: InstanceMessage, sends: SendUsageMessage) => ({
  instances: quota(instance.accountInstances, instance.instanceQuota),
  queued_sends: quota(sends.queued, sends.queueMax),
  sends_today: quota(sends.today, sends.dailyCap),
});
