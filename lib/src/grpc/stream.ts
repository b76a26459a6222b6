import { getDefaultHighWaterMark, setDefaultHighWaterMark } from 'node:stream';
import type { CallOptions, ClientReadableStream, ServiceError } from '@grpc/grpc-js';
import { unavailable } from '../errors';
import { fromServiceError } from './errors';

type ServerStreamMethod<Req, Res> = (request: Req, options: CallOptions) => ClientReadableStream<Res>;

export interface ServerStreamOptions {
  /**
   * How long each item may take to come while it is waited for (the first: the service's answer; the next: its pace),
   * else a 503 `service_timeout` and the call cancelled. Time the reader spends between items does not count: a
   * whole-call deadline would cut off a long stream read slowly (a large file to a slow client).
   */
  itemWithinMs?: number;
  /** Cancels the call (the reader went away); the iteration then ends with an error. */
  signal?: AbortSignal;
  /**
   * How many items may be received ahead of the reader (grpc-js's default: 16). 0: the next item is asked of the
   * service only when the reader asks for it, so the service (whose writes wait for the HTTP/2 window) reads at most
   * about one item ahead; for items the service must not read far ahead (an export's pages, read anew after an
   * erasure). Flow control does the rest: a reader that does not ask holds the service back.
   */
  readAhead?: number;
}

/**
 * Calls `method`, its response stream buffering `readAhead` items: grpc-js takes no option for it, and its stream
 * takes the default object-mode highWaterMark as it is made, synchronously within the call (set for that moment only).
 */
const open = <Req, Res>(method: ServerStreamMethod<Req, Res>, request: Req, readAhead: number | undefined): ClientReadableStream<Res> => {
  if (readAhead === undefined) return method(request, {});
  const before = getDefaultHighWaterMark(true);
  setDefaultHighWaterMark(true, readAhead);
  try {
    return method(request, {});
  } finally {
    setDefaultHighWaterMark(true, before);
  }
};

/**
 * Calls a server-streaming method; the items come as an async iterable, a failure throws an AppError. Breaking off
 * (`return()`) cancels the call once the item awaited settles, which `itemWithinMs` and `signal` bound.
 */
export async function* callServerStream<Req, Res>(method: ServerStreamMethod<Req, Res>, request: Req, options: ServerStreamOptions = {}): AsyncGenerator<Res> {
  const { itemWithinMs, signal, readAhead } = options;
  const call = open(method, request, readAhead);
  const cancel = (): void => void call.cancel();
  signal?.addEventListener('abort', cancel);
  if (signal?.aborted) cancel();
  let timedOut = false;
  let timer: NodeJS.Timeout | null = null;
  const disarm = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  try {
    const items = call[Symbol.asyncIterator]() as AsyncIterator<Res>;
    for (;;) {
      if (itemWithinMs !== undefined) {
        timer = setTimeout(() => {
          timedOut = true;
          cancel();
        }, itemWithinMs);
      }
      const next = await items.next();
      disarm();
      if (next.done) return;
      yield next.value;
    }
  } catch (error) {
    if (timedOut) throw unavailable('service_timeout', 'A backend service did not answer in time', error);
    // Cancelled by our own reader leaving: no fault of the service's (a 503 nobody receives, not a 500 in the log).
    if (signal?.aborted) throw unavailable('client_gone', 'The reader went away', error);
    throw fromServiceError(error as ServiceError);
  } finally {
    disarm();
    signal?.removeEventListener('abort', cancel);
    cancel();
  }
}
