import type { CallOptions, ClientReadableStream, ServiceError } from '@grpc/grpc-js';
import { unavailable } from '../errors';
import { fromServiceError } from './errors';

type ServerStreamMethod<Req, Res> = (request: Req, options: CallOptions) => ClientReadableStream<Res>;

/**
 * Calls a server-streaming method; the items come as an async iterable, a failure throws an AppError. Breaking off
 * cancels the call. `firstWithinMs` bounds the wait for the first item only (then a 503 `service_timeout`, the call
 * cancelled): a whole-call deadline would cut off a long stream read slowly (a large file to a slow client).
 */
export async function* callServerStream<Req, Res>(method: ServerStreamMethod<Req, Res>, request: Req, firstWithinMs?: number): AsyncGenerator<Res> {
  const call = method(request, {});
  let timedOut = false;
  let timer =
    firstWithinMs === undefined
      ? null
      : setTimeout(() => {
          timedOut = true;
          call.cancel();
        }, firstWithinMs);
  const started = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  try {
    for await (const item of call) {
      started();
      yield item as Res;
    }
  } catch (error) {
    if (timedOut) throw unavailable('service_timeout', 'A backend service did not start its answer in time', error);
    throw fromServiceError(error as ServiceError);
  } finally {
    started();
    call.cancel();
  }
}
