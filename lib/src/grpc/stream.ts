import type { CallOptions, ClientReadableStream, ServiceError } from '@grpc/grpc-js';
import { fromServiceError } from './errors';

type ServerStreamMethod<Req, Res> = (request: Req, options: CallOptions) => ClientReadableStream<Res>;

/** Calls a server-streaming method; the items come as an async iterable, a failure throws an AppError. Breaking off cancels the call. */
export async function* callServerStream<Req, Res>(method: ServerStreamMethod<Req, Res>, request: Req): AsyncGenerator<Res> {
  const call = method(request, {});
  try {
    for await (const item of call) yield item as Res;
  } catch (error) {
    throw fromServiceError(error as ServiceError);
  } finally {
    call.cancel();
  }
}
