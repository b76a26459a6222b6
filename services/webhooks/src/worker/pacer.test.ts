import { Pacer } from './pacer';

describe('Pacer', () => {
  it('lets work go at most at its rate, after a short burst', async () => {
    const pacer = new Pacer(100);
    const started = performance.now();
    for (let i = 0; i < 30; i++) await pacer.wait();
    const elapsed = performance.now() - started;
    // 30 items at 100/s, the first one at once: 290 ms, less the 50 ms burst allowance (a timer may fire a fraction
    // of a millisecond early, or late).
    expect(elapsed).toBeGreaterThanOrEqual(235);
    expect(elapsed).toBeLessThan(2_000);
  });
});
