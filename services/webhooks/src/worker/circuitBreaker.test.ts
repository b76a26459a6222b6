import { CircuitBreaker, deferralMs } from './circuitBreaker';

describe('circuit breaker', () => {
  let now = 0;
  const breaker = (): CircuitBreaker => new CircuitBreaker(3, 1_000, () => now);
  beforeEach(() => (now = 10_000));

  it('lets attempts through until the threshold of consecutive failures, then holds them for the cool-down', () => {
    const b = breaker();
    b.record('a', false);
    b.record('a', false);
    expect(b.waitMs('a')).toBe(0);
    b.record('a', false);
    expect(b.waitMs('a')).toBe(1_000);
    expect(b.waitMs('b')).toBe(0);
    now += 400;
    expect(b.waitMs('a')).toBe(600);
    expect(b.openCount()).toBe(1);
  });

  it('allows one attempt after the cool-down: a failure opens it again, a success closes it', () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) b.record('a', false);
    now += 1_000;
    expect(b.waitMs('a')).toBe(0);
    b.record('a', false);
    expect(b.waitMs('a')).toBe(1_000);
    now += 1_000;
    b.record('a', true);
    b.record('a', false);
    expect(b.waitMs('a')).toBe(0);
  });
});

describe('deferralMs', () => {
  const noJitter = (): number => 0;
  it('puts a delivery off for the circuit, at least 30 s, doubling each time in a row up to 10 min', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => deferralMs(5_000, n, noJitter))).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 600_000, 600_000, 600_000,
    ]);
    expect(deferralMs(45_000, 1, noJitter)).toBe(45_000);
  });
  it('adds up to a second of jitter', () => {
    expect(deferralMs(5_000, 1, () => 0.999)).toBe(30_999);
  });
});
