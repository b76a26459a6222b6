import { Agent, request, type Dispatcher } from 'undici';
import { forbiddenLiteralHost, guardedLookup } from '@wagw/lib';
import type { MediaPayload } from '../connector/port';

export interface MediaLimits {
  maxBytes: number;
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

/** Why media could not be fetched, as the `reason` of MessageFailed. */
export class MediaError extends Error {
  constructor(
    message: string,
    /**
     * Whether trying again later may succeed: the host did not answer in time, broke off, refused the connection, or
     * answered 408, 429 or 5xx. A file too large, a forbidden address or another HTTP error stays what it is.
     */
    readonly transient = false,
  ) {
    super(message);
  }
}

/** An HTTP status a host may answer differently a moment later (busy, rate-limited, failing over). */
const isTransientStatus = (status: number): boolean => status === 408 || status === 429 || (status >= 500 && status < 600);

/**
 * The file name a URL's path ends in, percent-decoded; as written when it does not decode (`bad%E0%A4%A`): a
 * URIError here once failed the dispatch as a transient error, so the send was retried for a minute and held up the
 * instance's later sends.
 */
export const fileNameOf = (url: string): string => {
  const last = new URL(url).pathname.split('/').pop() || 'file';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
};

/**
 * Why a body stopped coming: a stall past the idle limit or the fetch's time limit is a time-out; anything else (the
 * connection reset, or closed before the declared length) is not, and is named for what it was, so a host that broke
 * off is not mistaken for a slow one.
 */
const bodyError = (error: unknown, timedOut: boolean, received: number, timeoutMs: number): MediaError => {
  const e = error as { code?: string; message?: string };
  if (timedOut || e.code === 'UND_ERR_BODY_TIMEOUT') return new MediaError(`media_timeout: body not received within ${timeoutMs} ms`, true);
  return new MediaError(`media_unreachable: ${e.code ?? e.message ?? 'error'}, the body broke off after ${received} bytes`, true);
};

/** Redirects followed to a media_url's file: a share link to a CDN to a pre-signed URL takes two or three. */
export const MAX_MEDIA_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * What a URL must pass before the fetcher connects to it, the media_url and every redirect target alike: an IP
 * literal never goes through the guarded lookup, so a private or reserved one is refused here.
 */
export const checkHop = (url: string, allowPrivateNetworks: boolean): void => {
  if (!allowPrivateNetworks && forbiddenLiteralHost(new URL(url)) !== null) throw new MediaError('media_url_forbidden: private or reserved address');
};

/**
 * Where a redirect leads, resolved against the URL that answered it. Only http(s), no user name or password and no
 * port 0: a media_url may not carry them (assertCallableUrl), so neither may a hop, and none is ever sent on.
 */
const redirectTarget = (from: string, status: number, location: string | string[] | undefined): string => {
  const value = Array.isArray(location) ? location[0] : location;
  if (!value) throw new MediaError(`media_unavailable: HTTP ${status} without a Location`);
  let target: URL;
  try {
    target = new URL(value, from);
  } catch {
    throw new MediaError(`media_unavailable: HTTP ${status} with an invalid Location`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new MediaError('media_unavailable: redirect to a URL that is not http(s)');
  if (target.username || target.password) throw new MediaError('media_unavailable: redirect to a URL with credentials');
  // Refused in a media_url too (assertCallableUrl): nothing listens there, and a final answer beats retrying to connect.
  if (target.port === '0') throw new MediaError('media_unavailable: redirect to port 0');
  target.hash = '';
  return target.href;
};

/** An answer's body read to its end and dropped (a redirect's or an error page): the connection can be reused. */
const discard = (response: Dispatcher.ResponseData): Promise<void> => response.body.dump().catch(() => undefined);

/**
 * Fetches a message's media: one time limit for the whole fetch, a size cap (declared and actual), up to
 * MAX_MEDIA_REDIRECTS http(s) redirects, and the SSRF guard on every hop and connection unless private networks are
 * allowed.
 */
export const createMediaFetcher = (limits: MediaLimits) => {
  const agent = new Agent({
    headersTimeout: limits.timeoutMs,
    bodyTimeout: limits.timeoutMs,
    connect: limits.allowPrivateNetworks ? { timeout: limits.timeoutMs } : { timeout: limits.timeoutMs, lookup: guardedLookup },
  });

  const answerOf = async (url: string, signal: AbortSignal): Promise<Dispatcher.ResponseData> => {
    checkHop(url, limits.allowPrivateNetworks);
    try {
      return await request(url, { method: 'GET', dispatcher: agent, signal });
    } catch (error) {
      const e = error as { name?: string; code?: string; message?: string };
      if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT')
        throw new MediaError(`media_timeout: no answer within ${limits.timeoutMs} ms`, true);
      // The guarded lookup refused the host's address: a redirect to an internal host name lands here, and says so.
      if (e.code === 'EFORBIDDEN') throw new MediaError('media_url_forbidden: private or reserved address');
      throw new MediaError(`media_unreachable: ${e.code ?? e.message ?? 'error'}`, true);
    }
  };

  /** The first answer that is not a redirect, and the URL that gave it. */
  const followed = async (url: string, signal: AbortSignal): Promise<{ response: Dispatcher.ResponseData; url: string }> => {
    const seen = new Set<string>();
    let current = url;
    for (let redirects = 0; redirects <= MAX_MEDIA_REDIRECTS; redirects++) {
      seen.add(current);
      const response = await answerOf(current, signal);
      if (!REDIRECT_STATUSES.has(response.statusCode)) return { response, url: current };
      await discard(response);
      current = redirectTarget(current, response.statusCode, response.headers.location);
      if (seen.has(current)) throw new MediaError('media_unavailable: redirect loop');
    }
    throw new MediaError(`media_unavailable: more than ${MAX_MEDIA_REDIRECTS} redirects`);
  };

  /** The fetch under `signal`: the time limit (`timeout`), and the caller's abort if any. */
  const fetched = async (url: string, filename: string | null, caption: string | null, signal: AbortSignal, timeout: AbortSignal): Promise<MediaPayload> => {
    const { response, url: fileUrl } = await followed(url, signal);
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await discard(response);
      throw new MediaError(`media_unavailable: HTTP ${response.statusCode}`, isTransientStatus(response.statusCode));
    }
    const declared = Number(response.headers['content-length'] ?? 0);
    if (declared > limits.maxBytes) {
      // Destroyed unread, the body emits an AbortError a turn later; unheard, it was an uncaught exception that
      // stopped the sessions process, and the send, still queued, was fetched again by the replica taking over.
      response.body.on('error', () => undefined).destroy();
      throw new MediaError(`media_too_large: ${declared} bytes, the limit is ${limits.maxBytes}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > limits.maxBytes) {
          response.body.destroy();
          throw new MediaError(`media_too_large: over ${limits.maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      if (error instanceof MediaError) throw error;
      throw bodyError(error, timeout.aborted, size, limits.timeoutMs);
    }
    const type = response.headers['content-type'];
    const mimetype = (Array.isArray(type) ? type[0] : type)?.split(';')[0]?.trim() || 'application/octet-stream';
    // Named after where the file is, not the link to it (a share link's path is often an opaque id).
    const name = filename ?? fileNameOf(fileUrl);
    return { data: Buffer.concat(chunks), mimetype, filename: name, ...(caption ? { caption } : {}) };
  };

  return {
    /**
     * `cancel`: the caller's abort (the send can no longer go out: its instance was reset, logged out or erased), which
     * ends the fetch at once, as `media_cancelled`, not retried, whatever hop or byte it had reached.
     */
    async fetch(url: string, filename: string | null, caption: string | null, cancel?: AbortSignal): Promise<MediaPayload> {
      // One limit for every hop together, so a chain of redirects cannot stretch a send's fetch past it.
      const timeout = AbortSignal.timeout(limits.timeoutMs);
      try {
        return await fetched(url, filename, caption, cancel ? AbortSignal.any([timeout, cancel]) : timeout, timeout);
      } catch (error) {
        // Told apart from a host that broke off or did not answer (both retried): nobody waits for this fetch any more.
        if (cancel?.aborted) throw new MediaError('media_cancelled: the send can no longer go out');
        throw error;
      }
    },
    close: () => agent.close(),
  };
};

export type MediaFetcher = ReturnType<typeof createMediaFetcher>;
