import { createSigner, createVerifier, TokenError } from 'fast-jwt';
import { AppError, invalidArgument } from '../errors';

/** Account names: what a token's `sub` may hold. */
export const ACCOUNT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;

const MIN_SECRET_LENGTH = 32;

const assertSecret = (secret: string): void => {
  if (secret.length < MIN_SECRET_LENGTH) {
    throw invalidArgument('bad_config', `AUTH_JWT_SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
  }
};

/** Issues HS256 JWTs whose `sub` is the account. */
export const issueToken = (secret: string, account: string, ttlSeconds: number): string => {
  assertSecret(secret);
  if (!ACCOUNT_PATTERN.test(account)) {
    throw invalidArgument('bad_account', 'account: 1-64 letters, digits, _ . @ - (starting with a letter or digit)');
  }
  return createSigner({ key: secret, algorithm: 'HS256', expiresIn: ttlSeconds * 1000 })({ sub: account });
};

const unauthenticated = (code: string, message: string): AppError => new AppError('unauthenticated', code, message);

/** Verifies a token and returns its account, or throws an `unauthenticated` AppError that says what is wrong. */
export const createTokenVerifier = (secret: string): ((token: string | undefined) => string) => {
  assertSecret(secret);
  // fast-jwt keys its cache by a SHA-256 of the token (~5 % of the gateway's CPU under load). A custom key builder
  // would save that, but fast-jwt then prints a security warning at start-up (GHSA-rp9m-7r4c-75qg), so: the default.
  const verify = createVerifier({ key: secret, algorithms: ['HS256'], requiredClaims: ['sub', 'exp'], cache: 1000 });
  return (token) => {
    if (!token) throw unauthenticated('missing_token', 'Missing credential: send Authorization: Bearer <token> or access_token');
    let claims: { sub?: unknown };
    try {
      claims = verify(token) as { sub?: unknown };
    } catch (error) {
      if (error instanceof TokenError && error.code === TokenError.codes.expired) {
        throw unauthenticated('token_expired', 'The token has expired');
      }
      throw unauthenticated('invalid_token', 'The token is malformed or its signature is wrong');
    }
    if (typeof claims.sub !== 'string' || !ACCOUNT_PATTERN.test(claims.sub)) {
      throw unauthenticated('invalid_token', 'The token names no valid account');
    }
    return claims.sub;
  };
};
