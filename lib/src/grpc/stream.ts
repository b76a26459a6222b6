import type { CallOptions, ClientReadableStream, handleServerStreamingCall, ServerWritableStream, ServiceError } from '@grpc/grpc-js';
import type { Logger } from '../log';
import { AppError } from '../errors';
import { fromServiceError, toStatus } from './errors';

const drainedOrCancelled = (call: ServerWritableStream<unknown, unknown>): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('cancelled', done);
      resolve();
    };
    call.on('drain', done);
    call.on('cancelled', done);
  });

/**
 * Turns an async generator into a grpc-js server-streaming handler: each item is written as the client takes it
 * (a full send buffer waits for 'drain', so a slow reader holds the producer, not memory), a client that cancels
 * stops the generator, and an error ends the stream with the AppError's status (logged like a unary failure).
 */
export const serverStreamHandler =
  <Req, Res>(logger: Logger, method: string, fn: (request: Req) => AsyncIterable<Res>): handleServerStreamingCall<Req, Res> =>
  (call: ServerWritableStream<Req, Res>) => {
    const run = async (): Promise<void> => {
      for await (const item of fn(call.request)) {
        if (call.cancelled) return;
        if (!call.write(item)) await drainedOrCancelled(call);
      }
      call.end();
    };
    run().catch((error: unknown) => {
      if (!(error instanceof AppError) || error.kind === 'internal') logger.error({ err: error, method }, 'rpc failed');
      else if (error.kind === 'unavailable') logger.warn({ err: error, method }, 'rpc answered unavailable');
      call.emit('error', toStatus(error));
    });
  };

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
