import { randomBytes } from 'node:crypto';
import { createSigner, createVerifier, TokenError } from 'fast-jwt';
import { AppError, invalidArgument } from '../errors';
import { INSTANCE_ID_PATTERN } from '../ids';

/** Account names: what a token's `sub` may hold. */
export const ACCOUNT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;

/** What a token may do: send messages, read (status, history, deliveries), manage (everything else). */
export const TOKEN_SCOPES = ['send', 'read', 'manage'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** A verified token: its account, its id (`jti`, for revocation), and for an instance token its instance and scopes. */
export interface Credential {
  account: string;
  tokenId: string;
  /** Null for an account token (every instance of the account, every scope). */
  instanceId: string | null;
  scopes: readonly TokenScope[];
  /** When the token expires (ms since the epoch): a long-lived request (a live events stream) ends then. */
  expiresAt: number;
}

const MIN_SECRET_LENGTH = 32;
const TOKEN_ID = /^[0-9a-f]{32}$/;
/** A token id (`jti`) as issued: 32 lower-case hex characters. */
export const isTokenId = (value: string): boolean => TOKEN_ID.test(value);
const instanceIdPattern = new RegExp(INSTANCE_ID_PATTERN);

const assertSecret = (secret: string): void => {
  if (secret.length < MIN_SECRET_LENGTH) {
    throw invalidArgument('bad_config', `AUTH_JWT_SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
  }
};

const isScope = (value: unknown): value is TokenScope => TOKEN_SCOPES.some((s) => s === value);

/** Scopes given as `send,read` (the CLI): each known, at least one; anything else is a 400 naming the list. */
export const parseScopes = (value: string): TokenScope[] => {
  const listed = value.split(',').map((s) => s.trim());
  if (listed.length === 0 || !listed.every(isScope)) throw invalidArgument('invalid_scopes', `scopes: a comma-separated list of ${TOKEN_SCOPES.join(', ')}`);
  return TOKEN_SCOPES.filter((s) => listed.includes(s));
};

export interface TokenOptions {
  /** An instance token: limited to this instance and to `scopes`. */
  instanceId?: string;
  scopes?: readonly TokenScope[];
}

/**
 * Issues an HS256 JWT whose `sub` is the account, with an id (`jti`, to revoke it) and always an expiry. With an
 * instance, the token is limited to it (`inst`) and to its scopes (`scope`, space-separated as in OAuth).
 */
export const issueToken = (secret: string, account: string, ttlSeconds: number, options: TokenOptions = {}): string => {
  assertSecret(secret);
  if (!ACCOUNT_PATTERN.test(account)) {
    throw invalidArgument('bad_account', 'account: 1-64 letters, digits, _ . @ - (starting with a letter or digit)');
  }
  if (!(ttlSeconds > 0)) throw invalidArgument('bad_expiry', 'tokens always expire: give a positive lifetime');
  const { instanceId, scopes = TOKEN_SCOPES } = options;
  if (instanceId !== undefined && !instanceIdPattern.test(instanceId)) throw invalidArgument('invalid_instance_id', 'instance: 20 upper-case hex characters');
  const claims = instanceId ? { sub: account, inst: instanceId, scope: scopes.join(' ') } : { sub: account };
  return createSigner({ key: secret, algorithm: 'HS256', expiresIn: ttlSeconds * 1000, jti: randomBytes(16).toString('hex') })(claims);
};

const unauthenticated = (code: string, message: string): AppError => new AppError('unauthenticated', code, message);

interface Claims {
  sub?: unknown;
  exp?: unknown;
  jti?: unknown;
  inst?: unknown;
  scope?: unknown;
}

/** The credential a verified token's claims describe; malformed claims are an invalid token. */
const credentialOf = (claims: Claims): Credential => {
  if (typeof claims.sub !== 'string' || !ACCOUNT_PATTERN.test(claims.sub)) throw unauthenticated('invalid_token', 'The token names no valid account');
  // Tokens issued before token ids existed have none: they cannot be revoked one by one, and still expire.
  const tokenId = typeof claims.jti === 'string' && isTokenId(claims.jti) ? claims.jti : '';
  // The verifier requires `exp` and refuses a token past it.
  const expiresAt = Number(claims.exp) * 1000;
  if (claims.inst === undefined) return { account: claims.sub, tokenId, instanceId: null, scopes: TOKEN_SCOPES, expiresAt };
  const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  if (typeof claims.inst !== 'string' || !instanceIdPattern.test(claims.inst) || scopes.length === 0 || !scopes.every(isScope)) {
    throw unauthenticated('invalid_token', 'The token names no valid instance or scopes');
  }
  return { account: claims.sub, tokenId, instanceId: claims.inst, scopes, expiresAt };
};

/** How many verified tokens a verifier remembers (each repeat of one skips its signature check). */
const REMEMBERED_TOKENS = 1_000;

/**
 * Verifies a token and returns its credential, or throws an `unauthenticated` AppError that says what is wrong.
 *
 * The credentials of the last REMEMBERED_TOKENS tokens that verified are kept by the token itself, until they expire:
 * a client sends the same token with every request, and its check cost the gateway 8 % of its CPU under `send` (the
 * HMAC, and fast-jwt's own cache, which keys by a SHA-256 of the token: a custom key for it makes fast-jwt warn at
 * start-up, GHSA-rp9m-7r4c-75qg). A Map compares whole strings, so no other token can hit an entry; refused tokens are
 * not kept (each is checked again); revocation is checked by the caller on every request, cached or not.
 */
export const createTokenVerifier = (secret: string): ((token: string | undefined) => Credential) => {
  assertSecret(secret);
  const verify = createVerifier({ key: secret, algorithms: ['HS256'], requiredClaims: ['sub', 'exp'], cache: false });
  const verified = new Map<string, Credential>();
  return (token) => {
    if (!token) throw unauthenticated('missing_token', 'Missing credential: send Authorization: Bearer <token> or access_token');
    const known = verified.get(token);
    if (known !== undefined && known.expiresAt > Date.now()) return known;
    let claims: Claims;
    try {
      claims = verify(token) as Claims;
    } catch (error) {
      verified.delete(token);
      if (error instanceof TokenError && error.code === TokenError.codes.expired) {
        throw unauthenticated('token_expired', 'The token has expired');
      }
      throw unauthenticated('invalid_token', 'The token is malformed or its signature is wrong');
    }
    const credential = credentialOf(claims);
    // The oldest entry makes room (Map keeps insertion order).
    if (verified.size >= REMEMBERED_TOKENS) verified.delete(verified.keys().next().value!);
    verified.set(token, credential);
    return credential;
  };
};
