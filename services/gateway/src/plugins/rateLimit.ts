import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '@wagw/lib';
import { clientNetworkOf } from '../rateLimit/clientNetwork';
import type { WindowCounter } from '../rateLimit/windowCounter';
import { authenticatedAccount, type RateLimiter } from './auth';

export interface RateLimitSettings {
  /** Requests per window and account (every replica together); 0 = no limit. */
  accountMax: number;
  /** Requests per window and client address without a valid credential (token guessing); 0 = no limit. */
  anonymousMax: number;
  windowMs: number;
}

const ACCOUNT = 'account:';

const addressKey = (request: FastifyRequest): string => `address:${clientNetworkOf(request.ip)}`;

/** @fastify/rate-limit's store over the counts shared by every gateway replica. */
const storeOver = (counter: WindowCounter): FastifyRateLimitStoreCtor =>
  class SharedStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
      callback(null, counter.incr(key, timeWindow, max));
    }
    read(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      callback(null, counter.read(key, timeWindow));
    }
    child(): FastifyRateLimitStore {
      return this;
    }
  };

/** A wait in words, as the plugin's own message put it (`12 seconds`, `1 minute`, `10 minutes`). */
export const waitInWords = (seconds: number): string => {
  const [amount, unit] = seconds < 60 ? [seconds, 'second'] : seconds < 3_600 ? [Math.round(seconds / 60), 'minute'] : [Math.round(seconds / 3_600), 'hour'];
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
};

/**
 * The limiter of the `/v1` requests: one with a valid credential counts for its account, one without for its client
 * address, so token guessing is limited too (an IPv6 client by its /64). Every answer carries RateLimit-Limit,
 * -Remaining and -Reset (IETF draft); over the limit: 429 `rate_limited` with Retry-After. The plugin's counting
 * (`createRateLimit`) is used without its hook, which runs once per request: a request whose credential is in its
 * body is counted again, for its account, once the body is read (`RateLimiter.recount`).
 */
export const createRateLimiter = async (app: FastifyInstance, counter: WindowCounter, settings: RateLimitSettings): Promise<RateLimiter> => {
  const maxFor = (key: string): number => (key.startsWith(ACCOUNT) ? settings.accountMax : settings.anonymousMax);
  await app.register(rateLimit, {
    global: false,
    store: storeOver(counter),
    timeWindow: settings.windowMs,
    keyGenerator: (request) => {
      const account = authenticatedAccount(request);
      return account ? `${ACCOUNT}${account}` : addressKey(request);
    },
    // A limit of 0 is no limit: such a request is neither counted nor told a limit (no RateLimit-* headers), where a
    // huge number stood in for it and its headers showed a limit of 9007199254740991.
    allowList: (_request, key) => maxFor(key) === 0,
    max: (_request, key) => maxFor(key),
  });
  const limit = app.createRateLimit();
  const count = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const result = await limit(request);
    if (result.isAllowed) return;
    const { max, remaining, ttl, ttlInSeconds, isExceeded } = result;
    reply.header('ratelimit-limit', max).header('ratelimit-remaining', remaining).header('ratelimit-reset', ttlInSeconds);
    if (!isExceeded) return;
    const who = authenticatedAccount(request) ? 'this account' : 'requests without a valid credential from this address';
    throw new AppError(
      'rate_limited',
      'rate_limited',
      `Rate limit of ${max} requests per ${settings.windowMs / 1000} s reached for ${who}; retry in ${waitInWords(ttlInSeconds)}`,
      // The window's rest: the error handler sets Retry-After from this.
      { retryAfterS: Math.ceil(ttl / 1000) },
    );
  };
  return {
    count,
    recount: async (request, reply) => {
      // Counted for its address first, unless requests without a credential are not limited (then never counted).
      if (settings.anonymousMax > 0) counter.release(addressKey(request), settings.windowMs);
      await count(request, reply);
    },
  };
};
