import { connectionFactOf, inboundEvent, inboundMessageId, receiptEvent } from './platformFacts';

const now = '2026-11-23T10:00:00.000Z';

describe('platform facts (what a connection event means for the history)', () => {
  it('maps connection events to the facts the instance decides on, never carrying the QR code', () => {
    expect(connectionFactOf({ type: 'qr', qr: 'secret-ref' })).toEqual({ type: 'qr' });
    expect(connectionFactOf({ type: 'connected', number: '4915112345678' })).toEqual({ type: 'connected', number: '4915112345678' });
    expect(connectionFactOf({ type: 'disconnected', reason: 'qr_expired' })).toEqual({ type: 'disconnected', reason: 'qr_expired' });
    expect(connectionFactOf({ type: 'logged_out', reason: 'logged_out_on_phone' })).toEqual({ type: 'logged_out', reason: 'logged_out_on_phone' });
    expect(connectionFactOf({ type: 'failed', reason: 'forbidden' })).toEqual({ type: 'failed', reason: 'forbidden' });
  });

  it('leaves receipts and inbound messages to their message streams', () => {
    expect(connectionFactOf({ type: 'receipt', messageId: 'm1', status: 'sent' })).toBeNull();
    const message = { platformMessageId: 'P1', from: '4915100000001', pushName: null, text: 'hi', media: null, timestamp: now, ref: '{}' };
    expect(connectionFactOf({ type: 'inbound', message })).toBeNull();
  });

  it('records a receipt with its recipient under a command id that makes a repeat a no-op', () => {
    const sent = receiptEvent({ type: 'receipt', messageId: 'm1', status: 'delivered' }, '4915199999999', now);
    expect(sent).toEqual({
      commandId: 'receipt-m1-delivered',
      event: { type: 'MessageDelivered', schemaVersion: 1, occurredAt: now, data: { message_id: 'm1', to: '4915199999999' } },
    });
    const failed = receiptEvent({ type: 'receipt', messageId: 'm2', status: 'failed', reason: 'recipient_not_on_platform' }, '000123', now);
    expect(failed.event).toMatchObject({ type: 'MessageFailed', data: { message_id: 'm2', to: '000123', reason: 'recipient_not_on_platform' } });
    expect(receiptEvent({ type: 'receipt', messageId: 'm3', status: 'failed' }, 'x', now).event.data).toMatchObject({ reason: 'failed' });
  });

  it('names an inbound message from the platform id, the same every time and per instance', () => {
    const message = { platformMessageId: 'P1', from: '4915100000001', pushName: 'Ann', text: 'hi', media: null, timestamp: now, ref: '{}' };
    const first = inboundEvent('I1', { type: 'inbound', message }, now);
    expect(first.messageId).toBe(inboundMessageId('I1', 'P1'));
    expect(first.messageId).toMatch(/^in_[0-9a-f]{24}$/);
    expect(inboundEvent('I1', { type: 'inbound', message }, now).messageId).toBe(first.messageId);
    expect(inboundEvent('I2', { type: 'inbound', message }, now).messageId).not.toBe(first.messageId);
    expect(first.event).toMatchObject({ type: 'MessageReceived', data: { message_id: first.messageId, from: '4915100000001', push_name: 'Ann', text: 'hi' } });
  });
});
