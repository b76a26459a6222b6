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

const EVENT_ID = /^evt_([1-9][0-9]{0,15})_([0-9]{1,6})$/;

/** A webhook id back as its commit's sequence and the event's place in it, or null when it is not one. */
export const parseWebhookEventId = (id: string): { sequence: number; index: number } | null => {
  const match = EVENT_ID.exec(id);
  if (!match) return null;
  const sequence = Number(match[1]);
  return Number.isSafeInteger(sequence) ? { sequence, index: Number(match[2]) } : null;
};

const isMapped = (type: string): type is keyof typeof WEBHOOK_EVENT_TYPES => Object.hasOwn(WEBHOOK_EVENT_TYPES, type);

/** Where a received message's file is fetched (GET /v1/media), beside its description; relative to the gateway. */
export const mediaUrlOf = (instanceId: string, messageId: string): string =>
  `/v1/media?instance_id=${encodeURIComponent(instanceId)}&message_id=${encodeURIComponent(messageId)}`;

/** An erased message's file went with its refs (every replica drops them on the erasure): no url to send anyone to. */
const withMediaUrl = (data: Record<string, unknown>, instanceId: string): void => {
  const { media, message_id: messageId } = data;
  if (typeof media !== 'object' || media === null || typeof messageId !== 'string') return;
  data.media = { ...media, url: data.erased === true ? null : mediaUrlOf(instanceId, messageId) };
};

/** The webhook event for a domain event, or null when receivers are not told about that kind of event. */
export const toWebhookEvent = (commit: Commit, index: number, event: RecordedEvent): WebhookEvent | null => {
  if (!isMapped(event.type)) return null;
  const [instanceId, kind, messageId] = commit.stream.split('.');
  const data: Record<string, unknown> = { ...event.data };
  if (kind === 'message' && messageId && data.message_id === undefined) data.message_id = messageId;
  if (event.type === 'MessageReceived' && instanceId) withMediaUrl(data, instanceId);
  return {
    id: webhookEventId(commit.sequence, index),
    type: WEBHOOK_EVENT_TYPES[event.type],
    instance_id: instanceId ?? '',
    timestamp: event.occurredAt,
    data,
  };
};

/** Every webhook event a commit produces, in order; with `fromIndex`, only those of the events from that place on. */
export const webhookEventsOf = (commit: Commit, fromIndex = 0): WebhookEvent[] =>
  commit.events.flatMap((event, index) => {
    const webhook = index < fromIndex ? null : toWebhookEvent(commit, index, event);
    return webhook ? [webhook] : [];
  });
