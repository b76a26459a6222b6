import cors, { type FastifyCorsOptions } from '@fastify/cors';
import { invalidArgument } from '@wagw/lib';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Which web pages of other origins may call the API from a browser: `*` any, else the origins listed. */
export type CorsOrigins = '*' | readonly string[];

/**
 * `CORS_ORIGINS`: unset or empty, no other origin (a browser keeps a page elsewhere from reading any answer); `*`, any;
 * else origins separated by commas, each as a browser sends it (`https://app.example.com`, a port where not the
 * scheme's own): a path or a trailing slash never matches one, so it is refused at start rather than never matching.
 */
export const parseCorsOrigins = (value: string | undefined): CorsOrigins | undefined => {
  const listed = (value ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  if (listed.length === 0) return undefined;
  if (listed.includes('*')) {
    if (listed.length > 1) throw invalidArgument('bad_config', 'CORS_ORIGINS: * (any origin) stands alone, without other origins');
    return '*';
  }
  for (const origin of listed) {
    const url = URL.canParse(origin) ? new URL(origin) : null;
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== origin) {
      throw invalidArgument(
        'bad_config',
        `CORS_ORIGINS: ${origin} is no origin: give scheme://host[:port] as the browser sends it, e.g. https://app.example.com (no path, no trailing slash, lower case)`,
      );
    }
  }
  return listed;
};

/** What a page may send and read: the headers the API takes, and those of its answers a client acts on. */
const ALLOWED_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'last-event-id'];
const EXPOSED_HEADERS = ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'content-disposition'];
/** Browsers keep a preflight's answer this long (Chromium caps it at 2 hours), so a page asks once, not per call. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Answers browsers' CORS for the origins allowed (@fastify/cors, so that the preflight, `Vary` and the header lists
 * follow the Fetch standard without code of ours): a preflight is answered before the rate limit and auth (it carries
 * no credential), every answer to an allowed origin, errors and 429s included, says so, and credentials are
 * bearer tokens, never cookies, so `Access-Control-Allow-Credentials` is not sent. An OPTIONS that is no preflight
 * of an allowed origin goes on to the router like any other method (405 with `Allow`, or 404). Registered first.
 */
export const registerCors = async (app: FastifyInstance, origins: CorsOrigins): Promise<void> => {
  const allows = (origin: string): boolean => origins === '*' || origins.includes(origin);
  const optionsFor = (request: FastifyRequest): FastifyCorsOptions => {
    const origin = request.headers.origin;
    const preflight = request.method === 'OPTIONS';
    if (origin === undefined || !allows(origin) || (preflight && request.headers['access-control-request-method'] === undefined)) {
      return { origin: false };
    }
    return {
      origin: origins === '*' ? '*' : origin,
      methods: ['GET', 'HEAD', 'POST'],
      allowedHeaders: ALLOWED_HEADERS,
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: PREFLIGHT_MAX_AGE_S,
    };
  };
  await app.register(cors, { delegator: (request, callback) => callback(null, optionsFor(request)) });
};

/** The route @fastify/cors adds so that the router takes OPTIONS on any path: it names no path of the API. */
export const isCorsPreflightRoute = (url: string, methods: readonly string[]): boolean => url === '*' && methods.every((m) => m === 'OPTIONS');
