import { erasedByTime, erasedDelivery, isErasedBody } from './contentErasure';

const ERASED_AT = '2026-11-24T10:00:00.000Z';

describe('content erasure by time', () => {
  it('holds for a payload with content whose event came at or before the erasure, not after it', () => {
    expect(erasedByTime(ERASED_AT, 'message.received', '2026-11-24T09:59:59.999Z')).toBe(true);
    expect(erasedByTime(ERASED_AT, 'message.received', ERASED_AT)).toBe(true);
    expect(erasedByTime(ERASED_AT, 'message.received', '2026-11-24T10:00:00.001Z')).toBe(false);
  });

  it('never holds for payloads without content (receipts, instance changes) nor for an instance never erased', () => {
    expect(erasedByTime(ERASED_AT, 'message.sent', '2026-11-24T09:00:00.000Z')).toBe(false);
    expect(erasedByTime(ERASED_AT, 'instance.connected', '2026-11-24T09:00:00.000Z')).toBe(false);
    expect(erasedByTime(null, 'message.received', '2026-11-24T09:00:00.000Z')).toBe(false);
  });

  it('leaves a recorded payload that already reads erased (a replay of erased history) to be sent', () => {
    const before = { eventType: 'message.received', createdAt: '2026-11-24T09:00:00.000Z' };
    expect(erasedDelivery(ERASED_AT, { ...before, body: JSON.stringify({ data: { text: 'hi' } }) })).toBe(true);
    expect(erasedDelivery(ERASED_AT, { ...before, body: JSON.stringify({ data: { text: null, erased: true } }) })).toBe(false);
    expect(erasedDelivery(ERASED_AT, { ...before, body: null })).toBe(false);
    expect(isErasedBody('not json')).toBe(false);
  });
});
