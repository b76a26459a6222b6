import { AppError } from '@wagw/lib';
import { decideAfterAttempt, decideRedelivery, type AttemptResult } from './decisions';
import { deliveryEvent, type DeliveryEvent } from './events';
import { foldDelivery, type Delivery } from './state';

const NOW = '2026-11-22T10:00:00.000Z';
const policy = { schedule: [0, 1_000, 2_000], random: () => 0.5 };
const scheduled = deliveryEvent('DeliveryScheduled', NOW, { delivery_id: 'evt_1_0', instance_id: 'I', event_type: 'instance.reset', body: '{}' });
const delivery = (...events: DeliveryEvent[]): Delivery => foldDelivery([scheduled, ...events]) as Delivery;
const result = (outcome: AttemptResult['outcome'], extra: Partial<AttemptResult> = {}): AttemptResult => ({
  url: 'https://h.example',
  worker: 'w1',
  outcome,
  durationMs: 12,
  ...extra,
});
const attempted = (attempt: number, outcome: AttemptResult['outcome']) =>
  deliveryEvent('DeliveryAttempted', NOW, {
    attempt,
    url: 'https://h.example',
    outcome,
    status: 500,
    error: null,
    duration_ms: 1,
    next_attempt_in_ms: 1,
    worker: 'w1',
  });

describe('webhook delivery decisions', () => {
  it('records a delivered attempt and is done', () => {
    const { events, next } = decideAfterAttempt(delivery(), result('delivered', { status: 200 }), policy, NOW);
    expect(next).toEqual({ kind: 'done' });
    expect(foldDelivery([scheduled, ...events])).toMatchObject({
      status: 'delivered',
      attempts: [{ attempt: 1, outcome: 'delivered', status: 200, worker: 'w1' }],
    });
  });

  it('retries a failure after the next delay of the schedule', () => {
    const { events, next } = decideAfterAttempt(delivery(), result('retry', { status: 500 }), policy, NOW);
    expect(next).toEqual({ kind: 'retry', delayMs: expect.any(Number) });
    expect((next as { delayMs: number }).delayMs).toBeGreaterThanOrEqual(800);
    expect((next as { delayMs: number }).delayMs).toBeLessThanOrEqual(1_200);
    expect(events).toHaveLength(1);
    expect(foldDelivery([scheduled, ...events])).toMatchObject({ status: 'pending' });
  });

  it('waits at least as long as Retry-After asks', () => {
    const { next } = decideAfterAttempt(delivery(), result('retry', { status: 429, retryAfterMs: 60_000 }), policy, NOW);
    expect((next as { delayMs: number }).delayMs).toBeGreaterThanOrEqual(60_000);
  });

  it('dead-letters once the schedule is spent', () => {
    const { events, next } = decideAfterAttempt(delivery(attempted(1, 'retry'), attempted(2, 'retry')), result('retry', { status: 400 }), policy, NOW);
    expect(next).toEqual({ kind: 'done' });
    expect(foldDelivery([scheduled, attempted(1, 'retry'), attempted(2, 'retry'), ...events])).toMatchObject({
      status: 'dead',
      reason: 'retries exhausted after 3 attempt(s)',
    });
  });

  it('dead-letters on 410 Gone and asks for the webhook to be switched off', () => {
    const { events, next } = decideAfterAttempt(delivery(), result('gone', { status: 410 }), policy, NOW);
    expect(next.kind).toBe('disable_webhook');
    expect(foldDelivery([scheduled, ...events])).toMatchObject({ status: 'dead' });
  });

  it('redelivers only a dead delivery, starting a new round of the schedule', () => {
    const dead = delivery(attempted(1, 'retry'), deliveryEvent('DeliveryDeadLettered', NOW, { reason: 'x' }));
    const events = decideRedelivery(dead, NOW);
    expect(events).toEqual([deliveryEvent('RedeliveryRequested', NOW, { round: 1 })]);
    expect(foldDelivery([scheduled, attempted(1, 'retry'), deliveryEvent('DeliveryDeadLettered', NOW, { reason: 'x' }), ...events])).toMatchObject({
      status: 'pending',
      attemptsInRound: 0,
      round: 1,
      attempts: [expect.anything()],
    });
    expect(() => decideRedelivery(delivery(), NOW)).toThrow(AppError);
  });
});
