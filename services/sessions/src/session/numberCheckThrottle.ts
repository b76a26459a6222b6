import { AppError, invalidArgument } from '@wagw/lib';

export interface NumberCheckLimits {
  /** Numbers an instance may check in a burst; 0 (or `perMinute` 0): no throttle. */
  burst: number;
  /** Numbers per minute it regains. */
  perMinute: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * How many numbers each instance may check (check_number): a token bucket per instance. Bulk lookups are one of
 * the signals WhatsApp bans numbers for (Evolution API #2228, Baileys #1245), so a caller that asks faster than
 * `perMinute` gets 429 with the wait, before anything reaches WhatsApp.
 */
export class NumberCheckThrottle {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limits: NumberCheckLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes `count` numbers from the instance's allowance, or throws rate_limited (nothing taken). */
  take(instanceId: string, count: number): void {
    const { burst, perMinute } = this.limits;
    // 0 is "no limit", as for every limit in the configuration (a 0 per minute would otherwise promise a wait of Infinity s).
    if (burst === 0 || perMinute === 0) return;
    // The bucket never holds more than the burst: a 429 with a wait would promise what no wait brings.
    if (count > burst) {
      throw invalidArgument('too_many_numbers', `This gateway checks at most ${burst} numbers per check (NUMBER_CHECKS_BURST); split the list`);
    }
    const now = this.now();
    const bucket = this.buckets.get(instanceId) ?? { tokens: burst, at: now };
    const tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 60_000) * perMinute);
    if (tokens < count) {
      this.buckets.set(instanceId, { tokens, at: now });
      const waitS = Math.ceil(((count - tokens) / perMinute) * 60);
      throw new AppError('rate_limited', 'number_checks_throttled', `Too many number checks for this instance: try again in ${waitS} s`, {
        retryAfterS: waitS,
      });
    }
    this.buckets.set(instanceId, { tokens: tokens - count, at: now });
    // Full buckets carry no information: dropped, so the map holds only instances checking right now.
    if (tokens - count >= burst) this.buckets.delete(instanceId);
  }
}
