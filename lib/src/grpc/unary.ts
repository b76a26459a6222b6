import type { handleUnaryCall, sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from '../log';
import { AppError } from '../errors';
import { toStatus } from './errors';

/**
 * Logs a failed call: a bug is an error; a dependency that cannot answer now (a QR code not ready in time, NATS
 * restarting) is a warning: the caller gets a 503 and retries. Caller mistakes (4xx) are not logged here.
 */
export const reportFailure = (logger: Logger, method: string, error: unknown): void => {
  if (!(error instanceof AppError) || error.kind === 'internal') logger.error({ err: error, method }, 'rpc failed');
  else if (error.kind === 'unavailable') logger.warn({ err: error, method }, 'rpc answered unavailable');
};

/** A unary method's use case, as the `Call` stream runs it (callServer.ts): request in, response or AppError out. */
export type PlainUnary = (request: unknown) => Promise<unknown>;

const plainOf = new WeakMap<object, PlainUnary>();

/** The async function behind a handler made by unaryHandler; undefined for any other handler. */
export const plainUnaryOf = (handler: unknown): PlainUnary | undefined => (typeof handler === 'function' ? plainOf.get(handler) : undefined);

/**
 * Turns an async function into a grpc-js unary handler that maps AppErrors to statuses and logs the rest. The
 * function is remembered, so the service's `Call` stream serves the same method with the same code.
 */
export const unaryHandler = <Req, Res>(logger: Logger, method: string, fn: (request: Req) => Promise<Res>): handleUnaryCall<Req, Res> => {
  const handler = (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    fn(call.request).then(
      (response) => callback(null, response),
      (error: unknown) => {
        reportFailure(logger, method, error);
        callback(toStatus(error));
      },
    );
  };
  // The Call stream decodes the request with the method's own deserializer, so it is the Req this function takes.
  plainOf.set(handler, fn as PlainUnary);
  return handler;
};
