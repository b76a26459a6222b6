import { createHash } from 'node:crypto';
import { instanceEvent, messageEvent, type InstanceEvent, type MessageEvent, type MessageReceived } from '@wagw/lib';
import type { ConnectionEvent, ReceiptStatus } from '../connector/port';

/** What the session knows when a connection event comes: whether its QR was announced, and the linked number. */
export interface FactContext {
  qrIssued: boolean;
  /** The number the instance is linked to as far as the read model knows, or null. */
  linkedNumber: string | null;
  now: string;
}

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
 * The lifecycle events a connection event means for the instance's stream (pure): a QR code is announced once per
 * connection (never its content: it is a secret), a connection to a new number links it first, a QR that expired
 * returns the instance to `created`, and disconnects, logouts and failures carry their reason. Receipts and inbound
 * messages belong to message streams (`receiptEvent`, `inboundEvent`): none here.
 */
export const lifecycleEvents = (event: ConnectionEvent, context: FactContext): InstanceEvent[] => {
  const { now } = context;
  switch (event.type) {
    case 'qr':
      return context.qrIssued ? [] : [instanceEvent('InstanceQrIssued', now, {})];
    case 'connected':
      return [
        ...(context.linkedNumber === event.number ? [] : [instanceEvent('InstanceLinked', now, { number: event.number })]),
        instanceEvent('InstanceConnected', now, {}),
      ];
    case 'disconnected':
      return event.reason === 'qr_expired'
        ? [instanceEvent('InstanceQrExpired', now, {})]
        : [instanceEvent('InstanceDisconnected', now, { reason: event.reason, reconnecting: true })];
    case 'logged_out':
      return [instanceEvent('InstanceLoggedOut', now, { reason: event.reason })];
    case 'failed':
      return [instanceEvent('InstanceFailed', now, { reason: event.reason })];
    case 'receipt':
    case 'inbound':
      return [];
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
    }),
  };
};
