import { CircuitBreaker } from './circuitBreaker';

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
