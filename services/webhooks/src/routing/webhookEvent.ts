import { WEBHOOK_EVENT_TYPES, type Commit, type RecordedEvent, type WebhookEventType } from '@wagw/lib';

/** The body a receiver gets: `{ id, type, instance_id, timestamp, data }`. No QR content, no secrets. */
export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  instance_id: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** A stable id per domain event (the same on every retry): its commit's sequence and its place in the commit. */
export const webhookEventId = (sequence: number, index: number): string => `evt_${sequence}_${index}`;

const isMapped = (type: string): type is keyof typeof WEBHOOK_EVENT_TYPES => Object.hasOwn(WEBHOOK_EVENT_TYPES, type);

/** The webhook event for a domain event, or null when receivers are not told about that kind of event. */
export const toWebhookEvent = (commit: Commit, index: number, event: RecordedEvent): WebhookEvent | null => {
  if (!isMapped(event.type)) return null;
  const [instanceId, kind, messageId] = commit.stream.split('.');
  const data: Record<string, unknown> = { ...event.data };
  if (kind === 'message' && messageId && data.message_id === undefined) data.message_id = messageId;
  return {
    id: webhookEventId(commit.sequence, index),
    type: WEBHOOK_EVENT_TYPES[event.type],
    instance_id: instanceId ?? '',
    timestamp: event.occurredAt,
    data,
  };
};

/** Every webhook event a commit produces, in order. */
export const webhookEventsOf = (commit: Commit): WebhookEvent[] =>
  commit.events.flatMap((event, index) => {
    const webhook = toWebhookEvent(commit, index, event);
    return webhook ? [webhook] : [];
  });
