/** The kinds of failure the product distinguishes; each maps to one gRPC status and one HTTP status. */
export type ErrorKind =
  'invalid_argument' | 'unauthenticated' | 'permission_denied' | 'not_found' | 'conflict' | 'too_large' | 'rate_limited' | 'unavailable' | 'internal';

/**
 * An error with a stable machine `code` (e.g. `instance_not_found`) and a `kind` that decides its status.
 * Its message is safe to show to a caller; anything else belongs in `cause` (logged, never sent).
 */
export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AppError';
  }
}

export const invalidArgument = (code: string, message: string): AppError => new AppError('invalid_argument', code, message);
export const notFound = (code: string, message: string): AppError => new AppError('not_found', code, message);
export const conflict = (code: string, message: string): AppError => new AppError('conflict', code, message);
export const unavailable = (code: string, message: string, cause?: unknown): AppError => new AppError('unavailable', code, message, { cause });

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;
