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
  const payload = token.get()?.split('.')[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { inst?: unknown };
    return typeof claims.inst === 'string' && /^[0-9A-F]{20}$/.test(claims.inst) ? claims.inst : null;
  } catch {
    return null;
  }
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Called on any 401: the token is gone or expired, so the console goes back to sign-in. */
let onUnauthorized: () => void = () => undefined;
export const whenUnauthorized = (handler: () => void): void => {
  onUnauthorized = handler;
};

export type Json = Record<string, unknown>;

export const authHeaders = (): Record<string, string> => {
  const value = token.get();
  return value ? { authorization: `Bearer ${value}` } : {};
};

/** Calls a /v1 path (query values are encoded here); answers the JSON body or throws an ApiError. */
export const api = async (path: string, query: Record<string, string | number | undefined> = {}, init: RequestInit = {}): Promise<Json> => {
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
  if (response.status === 401) {
    token.clear();
    onUnauthorized();
  }
  if (!response.ok) {
    throw new ApiError(
      response.status,
      typeof body.code === 'string' ? body.code : 'error',
      typeof body.error === 'string' ? body.error : `HTTP ${response.status}`,
    );
  }
  return body;
};

export const errorText = (error: unknown): string => (error instanceof ApiError ? `${error.message} (${error.code})` : 'Something went wrong');
