import { reconnectDelayMs } from './reconnectPolicy';

describe('reconnect policy', () => {
  it('doubles from 1 s up to a 60 s cap', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 7, 8, 20].map((a) => reconnectDelayMs(a, mid))).toEqual([1_000, 2_000, 4_000, 8_000, 60_000, 60_000, 60_000]);
  });
  it('spreads reconnects with ±30 % jitter', () => {
    expect(reconnectDelayMs(1, () => 0)).toBe(700);
    expect(reconnectDelayMs(1, () => 1)).toBe(1_300);
  });
});
