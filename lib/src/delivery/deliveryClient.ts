import { Agent, request } from 'undici';
import { isIP } from 'node:net';
import { guardedLookup, isForbiddenAddress } from './ssrfGuard';
import { parseRetryAfter } from './retrySchedule';

/** delivered: 2xx. gone: 410 (switch the webhook off). retry: anything else, network errors and time-outs included. */
export type DeliveryOutcomeKind = 'delivered' | 'retry' | 'gone';

export interface DeliveryOutcome {
  kind: DeliveryOutcomeKind;
  status?: number;
  retryAfterMs?: number;
  error?: string;
  durationMs: number;
}

export interface DeliveryClient {
  deliver(url: string, body: string, headers: Record<string, string>): Promise<DeliveryOutcome>;
  close(): Promise<void>;
}

export interface DeliveryClientOptions {
  /** Whole-attempt time limit (default 15 s). */
  timeoutMs?: number;
  /** Allow loopback, private and link-local addresses (tests, on-premise receivers). */
  allowPrivateNetworks?: boolean;
}

const MAX_BODY_READ = 1024;

/**
 * POSTs webhook bodies with undici over keep-alive connections. Redirects are not followed (a 3xx is a failure),
 * and unless private networks are allowed, every connection's resolved address passes the SSRF guard.
 */
export const createDeliveryClient = (options: DeliveryClientOptions = {}): DeliveryClient => {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    connections: 64,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: options.allowPrivateNetworks ? { timeout: timeoutMs } : { timeout: timeoutMs, lookup: guardedLookup },
  });
  return {
    async deliver(url, body, headers) {
      const started = performance.now();
      const elapsed = (): number => performance.now() - started;
      // Connections to an IP literal skip DNS, so the guarded lookup never sees them: check them here.
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      if (!options.allowPrivateNetworks && isIP(host) && isForbiddenAddress(host)) {
        return { kind: 'retry', error: `${host} is a private or reserved address, which is not allowed`, durationMs: elapsed() };
      }
      try {
        const response = await request(url, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'wa-gateway-webhooks/1' },
          body,
          dispatcher: agent,
          signal: AbortSignal.timeout(timeoutMs),
        });
        let read = 0;
        for await (const chunk of response.body) {
          read += (chunk as Buffer).length;
          if (read > MAX_BODY_READ) {
            response.body.destroy();
            break;
          }
        }
        const status = response.statusCode;
        if (status >= 200 && status < 300) return { kind: 'delivered', status, durationMs: elapsed() };
        if (status === 410) return { kind: 'gone', status, durationMs: elapsed() };
        const retryAfter = response.headers['retry-after'];
        return {
          kind: 'retry',
          status,
          retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, new Date()),
          error: status >= 300 && status < 400 ? 'redirects are not followed' : `HTTP ${status}`,
          durationMs: elapsed(),
        };
      } catch (error) {
        const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
        const code = err.code ?? err.cause?.code;
        const message = err.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' ? `no answer within ${timeoutMs} ms` : (err.message ?? String(error));
        return { kind: 'retry', error: code ? `${code}: ${message}` : message, durationMs: elapsed() };
      }
    },
    close: async () => {
      if (!agent.closed && !agent.destroyed) await agent.close();
    },
  };
};
