import type { CallOptions, ClientUnaryCall, handleUnaryCall, requestCallback, sendUnaryData, ServerUnaryCall, ServiceError } from '@grpc/grpc-js';
import type { Logger } from '../log';
import { AppError } from '../errors';
import { fromServiceError, toStatus } from './errors';

/**
 * Logs a failed call: a bug is an error; a dependency that cannot answer now (a QR code not ready in time, NATS
 * restarting) is a warning: the caller gets a 503 and retries. Caller mistakes (4xx) are not logged here.
 */
export const reportFailure = (logger: Logger, method: string, error: unknown): void => {
  if (!(error instanceof AppError) || error.kind === 'internal') logger.error({ err: error, method }, 'rpc failed');
  else if (error.kind === 'unavailable') logger.warn({ err: error, method }, 'rpc answered unavailable');
};

/** Turns an async function into a grpc-js unary handler that maps AppErrors to statuses and logs the rest. */
export const unaryHandler =
  <Req, Res>(logger: Logger, method: string, fn: (request: Req) => Promise<Res>): handleUnaryCall<Req, Res> =>
  (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
    fn(call.request).then(
      (response) => callback(null, response),
      (error: unknown) => {
        reportFailure(logger, method, error);
        callback(toStatus(error));
      },
    );
  };

type UnaryMethod<Req, Res> = (request: Req, options: CallOptions, callback: requestCallback<Res>) => ClientUnaryCall;

/** Calls a unary method with a deadline; a failure rejects with an AppError. */
export const callUnary = <Req, Res>(method: UnaryMethod<Req, Res>, request: Req, timeoutMs: number): Promise<Res> =>
  new Promise((resolve, reject) => {
    method(request, { deadline: Date.now() + timeoutMs }, (error: ServiceError | null, response?: Res) => {
      if (error) reject(fromServiceError(error));
      else resolve(response as Res);
    });
  });
