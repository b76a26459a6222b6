import { deliveryEvent, type DeliveryEvent } from './events';
import { foldDelivery, nextAttemptDue, type Delivery } from './state';

const AT = '2026-11-23T10:00:00.000Z';
const scheduled = (notBefore?: string): DeliveryEvent =>
  deliveryEvent('DeliveryScheduled', AT, {
    delivery_id: 'evt_1_0',
    instance_id: 'i',
    event_type: 'message.sent',
    body: '{}',
    ...(notBefore ? { not_before: notBefore } : {}),
  });
const failed: DeliveryEvent = deliveryEvent('DeliveryAttempted', '2026-11-23T10:00:30.000Z', {
  attempt: 1,
  url: 'https://example.com/hook',
  outcome: 'retry',
  status: null,
  error: 'no answer within 15000 ms',
  duration_ms: 15_000,
  next_attempt_in_ms: 5_000,
  worker: 'w1',
});

// When the deliverer may make a delivery's next attempt (it puts the job off until then).
describe('nextAttemptDue', () => {
  it('is now for a delivery scheduled without a time', () => {
    expect(nextAttemptDue(foldDelivery([scheduled()]) as Delivery)).toBe(0);
  });

  it('is the handover time for the first attempt of a delivery the router handed over while its endpoint was slow', () => {
    expect(nextAttemptDue(foldDelivery([scheduled('2026-11-23T10:00:20.000Z')]) as Delivery)).toBe(Date.parse('2026-11-23T10:00:20.000Z'));
  });

  it("follows the retry schedule once the router's late attempt is recorded on it", () => {
    expect(nextAttemptDue(foldDelivery([scheduled('2026-11-23T10:00:20.000Z'), failed]) as Delivery)).toBe(Date.parse('2026-11-23T10:00:35.000Z'));
  });
});
