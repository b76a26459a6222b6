import { inboundEvent, inboundMessageId, lifecycleEvents, receiptEvent, type FactContext } from './platformFacts';

const now = '2026-11-23T10:00:00.000Z';
const fresh: FactContext = { qrIssued: false, linkedNumber: null, now };
const types = (events: Array<{ type: string }>): string[] => events.map((e) => e.type);

describe('platform facts (what a connection event means for the history)', () => {
  it('announces a QR code once per connection, without its content', () => {
    const first = lifecycleEvents({ type: 'qr', qr: 'secret-ref' }, fresh);
    expect(first).toEqual([{ type: 'InstanceQrIssued', schemaVersion: 1, occurredAt: now, data: {} }]);
    expect(lifecycleEvents({ type: 'qr', qr: 'next-ref' }, { ...fresh, qrIssued: true })).toEqual([]);
  });

  it('links a new number before connecting, and only connects an instance already linked to it', () => {
    expect(types(lifecycleEvents({ type: 'connected', number: '4915112345678' }, fresh))).toEqual(['InstanceLinked', 'InstanceConnected']);
    expect(lifecycleEvents({ type: 'connected', number: '4915112345678' }, fresh)[0]?.data).toEqual({ number: '4915112345678' });
    expect(types(lifecycleEvents({ type: 'connected', number: '4915112345678' }, { ...fresh, linkedNumber: '4915112345678' }))).toEqual(['InstanceConnected']);
    // Another phone scanned: the instance is linked anew.
    expect(types(lifecycleEvents({ type: 'connected', number: '4915199999999' }, { ...fresh, linkedNumber: '4915112345678' }))).toEqual([
      'InstanceLinked',
      'InstanceConnected',
    ]);
  });

  it('turns an expired QR into QrExpired, and other ends into their events with the reason', () => {
    expect(types(lifecycleEvents({ type: 'disconnected', reason: 'qr_expired' }, fresh))).toEqual(['InstanceQrExpired']);
    expect(lifecycleEvents({ type: 'disconnected', reason: 'connection_lost' }, fresh)[0]).toMatchObject({
      type: 'InstanceDisconnected',
      data: { reason: 'connection_lost', reconnecting: true },
    });
    expect(lifecycleEvents({ type: 'logged_out', reason: 'logged_out_on_phone' }, fresh)[0]).toMatchObject({
      type: 'InstanceLoggedOut',
      data: { reason: 'logged_out_on_phone' },
    });
    expect(lifecycleEvents({ type: 'failed', reason: 'forbidden' }, fresh)[0]).toMatchObject({ type: 'InstanceFailed', data: { reason: 'forbidden' } });
  });

  it('leaves receipts and inbound messages to their message streams', () => {
    expect(lifecycleEvents({ type: 'receipt', messageId: 'm1', status: 'sent' }, fresh)).toEqual([]);
    const message = { platformMessageId: 'P1', from: '4915100000001', pushName: null, text: 'hi', media: null, timestamp: now };
    expect(lifecycleEvents({ type: 'inbound', message }, fresh)).toEqual([]);
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
    const message = { platformMessageId: 'P1', from: '4915100000001', pushName: 'Ann', text: 'hi', media: null, timestamp: now };
    const first = inboundEvent('I1', { type: 'inbound', message }, now);
    expect(first.messageId).toBe(inboundMessageId('I1', 'P1'));
    expect(first.messageId).toMatch(/^in_[0-9a-f]{24}$/);
    expect(inboundEvent('I1', { type: 'inbound', message }, now).messageId).toBe(first.messageId);
    expect(inboundEvent('I2', { type: 'inbound', message }, now).messageId).not.toBe(first.messageId);
    expect(first.event).toMatchObject({ type: 'MessageReceived', data: { message_id: first.messageId, from: '4915100000001', push_name: 'Ann', text: 'hi' } });
  });
});
