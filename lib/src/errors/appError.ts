/** The kinds of failure the product distinguishes; each maps to one gRPC status and one HTTP status. */
export type ErrorKind =
  'invalid_argument' | 'unauthenticated' | 'permission_denied' | 'not_found' | 'conflict' | 'too_large' | 'rate_limited' | 'unavailable' | 'internal';

export interface AppErrorOptions {
  cause?: unknown;
  /**
   * When a retry may succeed, in whole seconds from now, where the one refusing knows (a throttle's refill, the next
   * UTC day of a daily cap): a 429's or 503's Retry-After. See retryAfterOf.
   */
  retryAfterS?: number;
}

/**
 * An error with a stable machine `code` (e.g. `instance_not_found`) and a `kind` that decides its status.
 * Its message is safe to show to a caller; anything else belongs in `cause` (logged, never sent).
 */
export class AppError extends Error {
  readonly retryAfterS: number | undefined;

  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    options?: AppErrorOptions,
  ) {
    super(message, options);
    this.name = 'AppError';
    // Whole seconds, as Retry-After carries them; a wait that is not one (0, negative, not finite) is none.
    const wait = options?.retryAfterS;
    this.retryAfterS = wait !== undefined && Number.isFinite(wait) && wait > 0 ? Math.ceil(wait) : undefined;
  }
}

/**
 * The kinds a client is told to retry, and the wait it is told when the one refusing did not know better: a burst
 * limit frees up within a second; a dependency that is down or electing a leader takes ~1-6 s (startupRetry.ts).
 */
const DEFAULT_RETRY_AFTER_S: Partial<Record<ErrorKind, number>> = { rate_limited: 1, unavailable: 2 };

/** The seconds a client should wait before retrying (Retry-After, RFC 9110 §10.2.3), or null for an error not worth a retry. */
export const retryAfterOf = (error: AppError): number | null => {
  const fallback = DEFAULT_RETRY_AFTER_S[error.kind];
  if (fallback === undefined) return null;
  return error.retryAfterS ?? fallback;
};

export const invalidArgument = (code: string, message: string): AppError => new AppError('invalid_argument', code, message);
export const notFound = (code: string, message: string): AppError => new AppError('not_found', code, message);
export const conflict = (code: string, message: string): AppError => new AppError('conflict', code, message);
export const unavailable = (code: string, message: string, cause?: unknown): AppError => new AppError('unavailable', code, message, { cause });

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;
