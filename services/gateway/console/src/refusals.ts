import { ApiError, errorText } from './api.js';

/** "in 7 seconds", or "in a moment" when the gateway did not say (no Retry-After). */
const when = (error: ApiError): string => (error.retryAfter === null ? 'in a moment' : `in ${error.retryAfter} second${error.retryAfter === 1 ? '' : 's'}`);

/**
 * What a person is told when a token was refused or a call could not be made: which of the causes it was (each asks
 * for something else: another token, waiting, or looking at the gateway), from the status and the API's error code.
 */
export const refusalText = (error: unknown): string => {
  if (!(error instanceof ApiError)) return errorText(error);
  if (error.status === 0) return 'Cannot reach the gateway: check that it is running and that this address is right, then try again.';
  if (error.status === 401) {
    if (error.code === 'token_expired') return 'This token has expired (token_expired): make a new one (npm run token) and sign in with it.';
    if (error.code === 'token_revoked') return 'This token has been revoked (token_revoked): sign in with another one.';
    return `This is not a valid token for this gateway (${error.code}): check that it was copied whole.`;
  }
  if (error.status === 403) return `This token may not do that (${error.code}): ${error.message}.`;
  if (error.status === 429) return `Too many requests (${error.code}): try again ${when(error)}.`;
  if (error.status >= 500) return `The gateway is unavailable right now (${error.message}, HTTP ${error.status}): try again ${when(error)}.`;
  return errorText(error);
};
