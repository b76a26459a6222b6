/** The console's only way to the gateway: the public /v1 API with the token from session storage. */
const TOKEN_KEY = 'wagw.console.token';

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string): void => sessionStorage.setItem(TOKEN_KEY, value),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/**
 * The instance an instance token is limited to (its `inst` claim), or null for an account token. Read only to choose
 * the page (an instance token cannot list instances); the gateway checks the token on every call.
 */
export const tokenInstance = (): string | null => {
  const inst = claimsOf(token.get())?.inst;
  return typeof inst === 'string' && /^[0-9A-F]{20}$/.test(inst) ? inst : null;
};

/** The account a token names (its `sub` claim), or null: read only to choose a page, never trusted. */
export const tokenAccount = (): string | null => {
  const sub = claimsOf(token.get())?.sub;
  return typeof sub === 'string' ? sub : null;
};

const claimsOf = (value: string | null): { inst?: unknown; sub?: unknown } | null => {
  const payload = value?.split('.')[1];
  if (!payload) return null;
  try {
    return JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { inst?: unknown; sub?: unknown };
  } catch {
    return null;
  }
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds to wait, from Retry-After (429 and 503 carry it), or null: a person is told when to try again. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

/** Called on any 401 with its error: the token is refused (invalid, expired, revoked), so the console goes back to sign-in. */
let onUnauthorized: (error: ApiError) => void = () => undefined;
export const whenUnauthorized = (handler: (error: ApiError) => void): void => {
  onUnauthorized = handler;
};

/** Retry-After as seconds (the gateway sends seconds, never a date), or null. */
const retryAfterOf = (response: Response): number | null => {
  const value = Number(response.headers.get('retry-after') ?? '');
  return response.headers.has('retry-after') && Number.isFinite(value) && value >= 0 ? Math.ceil(value) : null;
};

/** The error a failed answer stands for: its `code` and `error` from the body, or the status alone. */
export const apiErrorOf = (response: Response, body: Json): ApiError =>
  new ApiError(
    response.status,
    typeof body.code === 'string' ? body.code : 'error',
    typeof body.error === 'string' ? body.error : `HTTP ${response.status}`,
    retryAfterOf(response),
  );

export type Json = Record<string, unknown>;

export const authHeaders = (): Record<string, string> => {
  const value = token.get();
  return value ? { authorization: `Bearer ${value}` } : {};
};

/**
 * Calls a /v1 path (query values are encoded here); answers the JSON body or throws an ApiError. A 401 signs out,
 * except where the caller handles it itself (`signOutOn401: false`: checking a token on the sign-in page).
 */
export const api = async (
  path: string,
  query: Record<string, string | number | undefined> = {},
  init: RequestInit = {},
  { signOutOn401 = true }: { signOutOn401?: boolean } = {},
): Promise<Json> => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  let response: Response;
  try {
    response = await fetch(`/v1${path}${qs ? `?${qs}` : ''}`, { ...init, headers: { ...authHeaders(), ...(init.headers ?? {}) } });
  } catch {
    throw new ApiError(0, 'network_error', 'The gateway cannot be reached');
  }
  const body = (await response.json().catch(() => ({}))) as Json;
  if (response.ok) return body;
  const error = apiErrorOf(response, body);
  if (response.status === 401 && signOutOn401) {
    // The handler first: it reads whose token it was (to reopen this page for that account only), then it is cleared.
    onUnauthorized(error);
    token.clear();
  }
  throw error;
};

export const errorText = (error: unknown): string => (error instanceof ApiError ? `${error.message} (${error.code})` : 'Something went wrong');
