import { Agent, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { forbiddenLiteralHost, guardedLookup } from './ssrfGuard';
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
  /**
   * Whole-attempt time limit (default 15 s), connecting included. It starts when the attempt is dispatched, which is
   * when it starts to use a connection: the client opens one for every request that finds none idle (see below).
   */
  timeoutMs?: number;
  /** Allow loopback, private and link-local addresses (tests, on-premise receivers). */
  allowPrivateNetworks?: boolean;
}

/** At most this much of a response body is read; a longer one closes its connection (nobody needs it). */
const MAX_BODY_READ = 1024;

const outcomeOf = (status: number, retryAfter: string | string[] | undefined): Omit<DeliveryOutcome, 'durationMs'> => {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 410) return { kind: 'gone', status };
  return {
    kind: 'retry',
    status,
    retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, new Date()),
    error: status >= 300 && status < 400 ? 'redirects are not followed' : `HTTP ${status}`,
  };
};

const errorText = (error: unknown): string => {
  const err = error as { code?: string; message?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code;
  const message = err.message ?? String(error);
  return code ? `${code}: ${message}` : message;
};

/**
 * One POST on undici's low-level dispatch API: no stream or AbortSignal per request (the `request` API's cost at
 * thousands of deliveries per second). A single timer bounds the whole attempt; the outcome is known from the
 * status line, and the body is only drained (up to MAX_BODY_READ) so the connection can be reused.
 */
class AttemptHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private outcome: Omit<DeliveryOutcome, 'durationMs'> | null = null;
  private read = 0;
  private done = false;
  private readonly timer: NodeJS.Timeout;
  private readonly started = performance.now();

  constructor(
    private readonly timeoutMs: number,
    private readonly settle: (outcome: DeliveryOutcome) => void,
  ) {
    this.timer = setTimeout(() => {
      const timeout = new Error(`no answer within ${timeoutMs} ms`);
      if (this.controller) this.controller.abort(timeout);
      this.finish({ kind: 'retry', error: timeout.message });
    }, timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.done) controller.abort(new Error(`no answer within ${this.timeoutMs} ms`));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode >= 200) this.outcome = outcomeOf(statusCode, headers['retry-after']);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.read += chunk.length;
    if (this.read <= MAX_BODY_READ) return;
    // A long body: the outcome is known already; closing the connection is cheaper than reading it.
    if (this.outcome) this.finish(this.outcome);
    controller.abort(new Error('response body too long'));
  }

  onResponseEnd(): void {
    this.finish(this.outcome ?? { kind: 'retry', error: 'no response status' });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  fail(error: unknown): void {
    this.finish({ kind: 'retry', error: errorText(error) });
  }

  private finish(outcome: Omit<DeliveryOutcome, 'durationMs'>): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.settle({ ...outcome, durationMs: performance.now() - this.started });
  }
}

/**
 * POSTs webhook bodies with undici over keep-alive connections. Redirects are not followed (a 3xx is a failure),
 * and unless private networks are allowed, every connection's resolved address passes the SSRF guard.
 */
export const createDeliveryClient = (options: DeliveryClientOptions = {}): DeliveryClient => {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    // No cap per origin: with one, requests beyond it queued behind those in flight, so endpoints hanging on one origin
    // (a SaaS backend's `/hooks/<tenant>` paths) delayed every other instance on it by up to a time-out, each attempt's
    // timer running while it queued. The service bounds attempts in flight itself (WEBHOOK_CONCURRENCY lanes in the
    // router and in the deliverer, one replay at a time, one handed-off attempt per slow instance), so the pool opens a
    // connection for each, and never holds one back; an origin's pool is closed once all its connections are idle-closed.
    connections: null,
    // The attempt's own timer (timeoutMs) ends it first; these are undici's safety net.
    headersTimeout: timeoutMs + 1_000,
    bodyTimeout: timeoutMs + 1_000,
    connect: options.allowPrivateNetworks ? { timeout: timeoutMs } : { timeout: timeoutMs, lookup: guardedLookup },
  });
  return {
    deliver(url, body, headers) {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return Promise.resolve({ kind: 'retry', error: `invalid URL: ${url}`, durationMs: 0 });
      }
      const host = options.allowPrivateNetworks ? null : forbiddenLiteralHost(target);
      if (host !== null) {
        return Promise.resolve({ kind: 'retry', error: `${host} is a private or reserved address, which is not allowed`, durationMs: 0 });
      }
      return new Promise<DeliveryOutcome>((settle) => {
        const handler = new AttemptHandler(timeoutMs, settle);
        try {
          agent.dispatch(
            {
              origin: target.origin,
              path: `${target.pathname}${target.search}`,
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'wa-gateway-webhooks/1' },
              body,
            },
            handler,
          );
        } catch (error) {
          handler.fail(error);
        }
      });
    },
    close: async () => {
      if (!agent.closed && !agent.destroyed) await agent.close();
    },
  };
};
