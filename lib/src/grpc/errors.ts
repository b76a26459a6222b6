import { Metadata, status as Status, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { AppError, type ErrorKind } from '../errors';
import { concurrentUpdate, isVersionConflict } from '../eventStore/port';

const KIND_TO_STATUS: Record<ErrorKind, Status> = {
  invalid_argument: Status.INVALID_ARGUMENT,
  unauthenticated: Status.UNAUTHENTICATED,
  permission_denied: Status.PERMISSION_DENIED,
  not_found: Status.NOT_FOUND,
  conflict: Status.FAILED_PRECONDITION,
  too_large: Status.RESOURCE_EXHAUSTED,
  rate_limited: Status.RESOURCE_EXHAUSTED,
  unavailable: Status.UNAVAILABLE,
  internal: Status.INTERNAL,
};

const KINDS = new Set<string>(Object.keys(KIND_TO_STATUS));

/**
 * The error a caller is told. The event store's version conflict is internal (a service retries it); one that got
 * past those retries is the retryable concurrent_update, never a 409 no operation documents.
 */
const answerable = (error: unknown): unknown => (isVersionConflict(error) ? concurrentUpdate(error) : error);

/** An AppError as a gRPC status; anything else becomes INTERNAL with no detail (the cause stays in the log). */
export const toStatus = (thrown: unknown): Partial<StatusObject> => {
  const metadata = new Metadata();
  const error = answerable(thrown);
  if (error instanceof AppError) {
    metadata.set('error-kind', error.kind);
    metadata.set('error-code', error.code);
    if (error.retryAfterS !== undefined) metadata.set('error-retry-after-s', String(error.retryAfterS));
    return { code: KIND_TO_STATUS[error.kind], details: error.message, metadata };
  }
  metadata.set('error-kind', 'internal');
  metadata.set('error-code', 'internal');
  return { code: Status.INTERNAL, details: 'Internal error', metadata };
};

/** A wait the server sent (seconds, as metadata or a CallError field; absent or 0: none; AppError checks it). */
const retryAfter = (value: string | number | undefined): { retryAfterS?: number } => (value === undefined ? {} : { retryAfterS: Number(value) });

const first = (metadata: Metadata | undefined, key: string): string | undefined => {
  const value = metadata?.get(key)[0];
  return typeof value === 'string' ? value : undefined;
};

/** A gRPC failure back as an AppError: the server's kind and code when it sent them, else from the status. */
export const fromServiceError = (error: ServiceError): AppError => {
  const kind = first(error.metadata, 'error-kind');
  const code = first(error.metadata, 'error-code');
  if (kind && KINDS.has(kind) && code)
    return new AppError(kind as ErrorKind, code, error.details, { cause: error, ...retryAfter(first(error.metadata, 'error-retry-after-s')) });
  switch (error.code) {
    case Status.UNAVAILABLE:
      return new AppError('unavailable', 'service_unavailable', 'A backend service is unreachable', { cause: error });
    case Status.UNIMPLEMENTED:
      // The service is of another release than the caller (a rolling upgrade under way): try again later.
      return new AppError('unavailable', 'unknown_method', 'A backend service does not offer this call (another release?)', { cause: error });
    case Status.DEADLINE_EXCEEDED:
      return new AppError('unavailable', 'service_timeout', 'A backend service did not answer in time', { cause: error });
    default:
      return new AppError('internal', 'internal', 'Internal error', { cause: error });
  }
};

/** An error as plain fields, for answers that travel inside a message (a stream's per-item results, call.proto's CallError). */
export interface ErrorDetail {
  kind: string;
  code: string;
  message: string;
  /** AppError.retryAfterS; 0 = none (proto3's default). */
  retryAfterS?: number;
}

export const toErrorDetail = (thrown: unknown): ErrorDetail => {
  const error = answerable(thrown);
  return error instanceof AppError
    ? { kind: error.kind, code: error.code, message: error.message, ...(error.retryAfterS === undefined ? {} : { retryAfterS: error.retryAfterS }) }
    : { kind: 'internal', code: 'internal', message: 'Internal error' };
};

export const fromErrorDetail = (detail: ErrorDetail): AppError =>
  KINDS.has(detail.kind)
    ? new AppError(detail.kind as ErrorKind, detail.code, detail.message, retryAfter(detail.retryAfterS))
    : new AppError('internal', 'internal', 'Internal error');
