import type { ServerResponse } from 'node:http';
import type { ServiceError } from '@grpc/grpc-js';
import type { FastifyBaseLogger } from 'fastify';
import { Counter, fromServiceError, Gauge, type StreamEventsFrameMessage } from '@wagw/lib';
import type { LiveCall } from './liveCall';
import { sseComment, sseEnd, sseEvent, sseRetry } from './sseFormat';

export interface SseOptions {
  /** A comment line this often keeps proxies and load balancers from closing an idle stream. */
  heartbeatMs: number;
  /**
   * The most a reader may have waiting in this process (bytes written to the socket that it has not taken yet).
   * Past it the reader gets a final `end` event (`slow_reader`) and is disconnected: a slow reader never grows the gateway.
   */
  maxBufferBytes: number;
  /** How long a disconnected reader's last bytes may still drain before its socket is destroyed. */
  lingerMs: number;
}

export const SSE_DEFAULTS: SseOptions = { heartbeatMs: 15_000, maxBufferBytes: 1024 * 1024, lingerMs: 5_000 };

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-store',
  connection: 'keep-alive',
  // nginx and similar proxies would otherwise buffer the stream.
  'x-accel-buffering': 'no',
} as const;

const openStreams = new Gauge({ name: 'sse_readers', help: 'Open /v1/events streams' });
const slowReaders = new Counter({ name: 'sse_slow_readers_total', help: '/v1/events readers cut off for falling too far behind' });

/** Browsers reconnect after this long (they send Last-Event-ID, so nothing is lost). */
const RETRY_MS = 2_000;

/**
 * One reader's event stream: frames of the live call written as server-sent events, heartbeats, the buffer bound,
 * and teardown when either side ends. Resolves when the stream is over (the call is cancelled by then).
 */
export const serveSse = (
  res: ServerResponse,
  call: LiveCall,
  options: SseOptions,
  log: FastifyBaseLogger,
): { done: Promise<void>; end(reason: string, code?: string): void } => {
  let finished = false;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const heartbeat = setInterval(() => res.write(sseComment('heartbeat')), options.heartbeatMs);

  const finish = (last?: string): void => {
    if (finished) return;
    finished = true;
    openStreams.dec();
    clearInterval(heartbeat);
    call.off('data', onData);
    call.cancel();
    if (last && !res.destroyed) res.write(last);
    res.end();
    // A reader that never reads would keep its unsent bytes here for as long as TCP allows; it gets a short grace.
    const linger = setTimeout(() => res.destroy(), options.lingerMs);
    linger.unref();
    res.once('close', () => clearTimeout(linger));
    resolveDone();
  };

  const onData = (frame: StreamEventsFrameMessage): void => {
    if (frame.frame !== 'event' || !frame.event) return;
    res.write(sseEvent(frame.event.id, frame.event.type, frame.event.json));
    if (res.writableLength > options.maxBufferBytes) {
      log.warn({ bufferedBytes: res.writableLength }, 'events reader too slow; disconnected');
      slowReaders.inc();
      finish(sseEnd('The reader fell too far behind; reconnect with Last-Event-ID to resume', 'slow_reader'));
    }
  };

  call.on('data', onData);
  // After a cancel the call reports CANCELLED; only a failure while still streaming is news for the reader.
  call.on('error', (error: ServiceError) => {
    if (finished) return;
    const appError = fromServiceError(error);
    log.warn({ err: error, code: appError.code }, 'events stream broke off');
    finish(sseEnd(appError.message, appError.code));
  });
  call.on('end', () => finish(sseEnd('The events stream ended (a service restarted); reconnect with Last-Event-ID', 'stream_ended')));
  res.on('close', () => finish());
  const stream = { done, end: (reason: string, code = 'server_shutdown') => finish(sseEnd(reason, code)) };

  openStreams.inc();
  // A reader gone while the call was opening closed the response before anyone listened for its 'close': the
  // call, its feed and the timers would otherwise stay until the token expired.
  if (res.destroyed) {
    finish();
    return stream;
  }
  // Node merges these with the headers already on the response: the hooks' (RateLimit-*), put there by routes/events.ts.
  res.writeHead(200, SSE_HEADERS);
  res.write(sseRetry(RETRY_MS));
  res.write(sseComment('connected'));
  call.resume();
  return stream;
};
