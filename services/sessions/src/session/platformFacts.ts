import { createHash } from 'node:crypto';
import { messageEvent, type ConnectionFact, type MessageEvent, type MessageReceived } from '@wagw/lib';
import type { ConnectionEvent, ReceiptStatus } from '../connector/port';

const RECEIPT_EVENTS: Record<ReceiptStatus, 'MessageSent' | 'MessageDelivered' | 'MessageRead' | 'MessageFailed'> = {
  sent: 'MessageSent',
  delivered: 'MessageDelivered',
  read: 'MessageRead',
  failed: 'MessageFailed',
};

/** An inbound message's id in our streams: derived from the platform's id, a valid stream token. */
export const inboundMessageId = (instanceId: string, platformId: string): string =>
  `in_${createHash('sha256').update(`${instanceId}:${platformId}`).digest('hex').slice(0, 24)}`;

/**
 * The connection fact a connection event means for the instance's stream (pure; the instance's decider decides which
 * events it records). The QR code's content is dropped here: it is a secret. Receipts and inbound messages belong to
 * message streams (`receiptEvent`, `inboundEvent`): null for them.
 */
export const connectionFactOf = (event: ConnectionEvent): ConnectionFact | null => {
  switch (event.type) {
    case 'qr':
      return { type: 'qr' };
    case 'connected':
      return { type: 'connected', number: event.number };
    case 'disconnected':
    case 'logged_out':
    case 'failed':
      return { type: event.type, reason: event.reason };
    case 'restricted':
      return { type: 'restricted', until: event.until };
    case 'unrestricted':
      return { type: 'unrestricted' };
    case 'receipt':
    case 'inbound':
      return null;
  }
};

/** A receipt as its message's event (`to` is the recipient, for the webhook), with the command id that makes a repeat a no-op. */
export const receiptEvent = (event: Extract<ConnectionEvent, { type: 'receipt' }>, to: string, now: string): { event: MessageEvent; commandId: string } => {
  const type = RECEIPT_EVENTS[event.status];
  const data = type === 'MessageFailed' ? { message_id: event.messageId, to, reason: event.reason ?? 'failed' } : { message_id: event.messageId, to };
  return { event: messageEvent(type, now, data as never), commandId: `receipt-${event.messageId}-${event.status}` };
};

/** An inbound message as `MessageReceived` on its own stream, named from the platform's id (a repeat is recognised). */
export const inboundEvent = (
  instanceId: string,
  event: Extract<ConnectionEvent, { type: 'inbound' }>,
  now: string,
): { messageId: string; event: MessageReceived } => {
  const m = event.message;
  const messageId = inboundMessageId(instanceId, m.platformMessageId);
  return {
    messageId,
    event: messageEvent('MessageReceived', now, {
      message_id: messageId,
      from: m.from,
      push_name: m.pushName,
      text: m.text,
      media: m.media,
      timestamp: m.timestamp,
      platform_message_id: m.platformMessageId,
      group_id: m.groupId ?? null,
    }),
  };
};
