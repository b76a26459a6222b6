import { NumberCheckThrottle } from './numberCheckThrottle';

describe('NumberCheckThrottle', () => {
  it('allows a burst, then refuses with the wait until numbers come back at the per-minute rate', () => {
    let now = 0;
    const throttle = new NumberCheckThrottle({ burst: 50, perMinute: 30 }, () => now);
    throttle.take('A', 50);
    const refused = (() => {
      try {
        throttle.take('A', 1);
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(refused).toMatchObject({ kind: 'rate_limited', code: 'number_checks_throttled', retryAfterS: 2 });
    expect(String(refused)).toMatch(/try again in 2 s/);
    now += 10_000; // 5 numbers back
    throttle.take('A', 5);
    expect(() => throttle.take('A', 1)).toThrow(/try again/);
    // Another instance has its own allowance.
    throttle.take('B', 50);
  });

  it('takes nothing from a refused request, and never refills beyond the burst', () => {
    let now = 0;
    const throttle = new NumberCheckThrottle({ burst: 10, perMinute: 60 }, () => now);
    throttle.take('A', 10);
    expect(() => throttle.take('A', 1)).toThrow(/try again/);
    now += 3_600_000;
    throttle.take('A', 10);
    expect(() => throttle.take('A', 1)).toThrow(/try again/);
  });

  it('refuses a check of more numbers than the burst as a 400, not a 429 whose wait would never be enough', () => {
    const throttle = new NumberCheckThrottle({ burst: 10, perMinute: 30 }, () => 0);
    const refused = (() => {
      try {
        throttle.take('A', 11);
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(refused).toMatchObject({ kind: 'invalid_argument', code: 'too_many_numbers' });
    expect(String(refused)).toMatch(/at most 10 numbers per check/);
    // Nothing was taken.
    throttle.take('A', 10);
  });

  it('throttles nothing when either limit is 0 ("no limit", as everywhere in the configuration), instead of a wait of Infinity s', () => {
    for (const limits of [
      { burst: 50, perMinute: 0 },
      { burst: 0, perMinute: 30 },
    ]) {
      const throttle = new NumberCheckThrottle(limits, () => 0);
      for (let i = 0; i < 20; i++) throttle.take('A', 50);
    }
  });
});
