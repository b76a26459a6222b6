import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance, preValidationAsyncHookHandler } from 'fastify';
import { AppError } from '@wagw/lib';
import { clientNetworkOf } from '../rateLimit/clientNetwork';
import type { WindowCounter } from '../rateLimit/windowCounter';
import { authenticatedAccount } from './auth';

export interface RateLimitSettings {
  /** Requests per window and account (every replica together); 0 = no limit. */
  accountMax: number;
  /** Requests per window and client address without a valid credential (token guessing); 0 = no limit. */
  anonymousMax: number;
  windowMs: number;
}

const ACCOUNT = 'account:';

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

/**
 * The limiter of the `/v1` routes, as a preValidation hook that runs after the credential was read and before it is
 * refused: a request with a valid credential counts for its account, one without for its client address, so token
 * guessing is limited too (an IPv6 client by its /64). Over the limit: 429 `rate_limited` with Retry-After and the RateLimit-* headers.
 */
export const createRateLimiter = async (app: FastifyInstance, counter: WindowCounter, settings: RateLimitSettings): Promise<preValidationAsyncHookHandler> => {
  await app.register(rateLimit, {
    global: false,
    store: storeOver(counter),
    enableDraftSpec: true,
    timeWindow: settings.windowMs,
    keyGenerator: (request) => {
      const account = authenticatedAccount(request);
      return account ? `${ACCOUNT}${account}` : `address:${clientNetworkOf(request.ip)}`;
    },
    max: (_request, key) => (key.startsWith(ACCOUNT) ? settings.accountMax : settings.anonymousMax) || Number.MAX_SAFE_INTEGER,
    errorResponseBuilder: (request, { max, after, ttl }) => {
      const who = authenticatedAccount(request) ? 'this account' : 'requests without a valid credential from this address';
      return new AppError(
        'rate_limited',
        'rate_limited',
        `Rate limit of ${max} requests per ${settings.windowMs / 1000} s reached for ${who}; retry in ${after}`,
        // The window's rest, as the plugin's own Retry-After says: the error handler sets the header from this.
        { retryAfterS: Math.ceil(ttl / 1000) },
      );
    },
  });
  return app.rateLimit();
};
