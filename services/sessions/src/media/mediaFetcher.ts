import { Agent, request } from 'undici';
import { guardedLookup, isForbiddenAddress } from '@wagw/lib';
import { isIP } from 'node:net';
import type { MediaPayload } from '../connector/port';

export interface MediaLimits {
  maxBytes: number;
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

/** Why media could not be fetched, as the `reason` of MessageFailed. */
export class MediaError extends Error {}

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
 * Fetches a message's media: a time limit, a size cap (declared and actual), no redirects to elsewhere than
 * http(s), and the SSRF guard on every connection unless private networks are allowed.
 */
export const createMediaFetcher = (limits: MediaLimits) => {
  const agent = new Agent({
    headersTimeout: limits.timeoutMs,
    bodyTimeout: limits.timeoutMs,
    connect: limits.allowPrivateNetworks ? { timeout: limits.timeoutMs } : { timeout: limits.timeoutMs, lookup: guardedLookup },
  });
  return {
    async fetch(url: string, filename: string | null, caption: string | null): Promise<MediaPayload> {
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      if (!limits.allowPrivateNetworks && isIP(host) && isForbiddenAddress(host)) throw new MediaError('media_url_forbidden: private or reserved address');
      let response;
      try {
        response = await request(url, { method: 'GET', dispatcher: agent, signal: AbortSignal.timeout(limits.timeoutMs) });
      } catch (error) {
        const e = error as { name?: string; code?: string; message?: string };
        if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT') throw new MediaError(`media_timeout: no answer within ${limits.timeoutMs} ms`);
        throw new MediaError(`media_unreachable: ${e.code ?? e.message ?? 'error'}`);
      }
      if (response.statusCode < 200 || response.statusCode >= 300) {
        await response.body.dump();
        throw new MediaError(`media_unavailable: HTTP ${response.statusCode}`);
      }
      const declared = Number(response.headers['content-length'] ?? 0);
      if (declared > limits.maxBytes) {
        response.body.destroy();
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
        throw new MediaError(`media_timeout: body not received within ${limits.timeoutMs} ms`);
      }
      const type = response.headers['content-type'];
      const mimetype = (Array.isArray(type) ? type[0] : type)?.split(';')[0]?.trim() || 'application/octet-stream';
      const name = filename ?? fileNameOf(url);
      return { data: Buffer.concat(chunks), mimetype, filename: name, ...(caption ? { caption } : {}) };
    },
    close: () => agent.close(),
  };
};

export type MediaFetcher = ReturnType<typeof createMediaFetcher>;
