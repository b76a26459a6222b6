import { DEFAULT_RETRY_SCHEDULE, nextDelayMs, parseRetryAfter, parseSchedule } from './retrySchedule';

describe('retry schedule', () => {
  it('defaults to at once, 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h', () => {
    expect(DEFAULT_RETRY_SCHEDULE).toEqual([0, 5e3, 30e3, 120e3, 600e3, 1_800e3, 3_600e3, 10_800e3, 21_600e3, 43_200e3]);
  });
  it('parses a configured schedule and rejects a bad one clearly', () => {
    expect(parseSchedule('0, 100ms,2s,1m,1h,250')).toEqual([0, 100, 2_000, 60_000, 3_600_000, 250]);
    expect(() => parseSchedule('1s,soon')).toThrow('WEBHOOK_RETRY_SCHEDULE entry "soon" is not a duration: give a comma-separated list like 0,5s,30s,2m,1h');
  });
  it('gives the next delay with ±20 % jitter, and null once the schedule is spent', () => {
    const schedule = [0, 1_000, 10_000];
    expect(nextDelayMs(schedule, 1, () => 0)).toBe(800);
    expect(nextDelayMs(schedule, 1, () => 1)).toBe(1_200);
    expect(nextDelayMs(schedule, 2, () => 0.5)).toBe(10_000);
    expect(nextDelayMs(schedule, 3, () => 0.5)).toBeNull();
  });
  it('waits at least as long as Retry-After, up to 24 h', () => {
    expect(nextDelayMs([0, 1_000], 1, () => 0.5, 30_000)).toBe(30_000);
    expect(nextDelayMs([0, 1_000], 1, () => 0.5, 90 * 3_600_000)).toBe(24 * 3_600_000);
  });
  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = new Date('2026-11-22T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('whenever', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
