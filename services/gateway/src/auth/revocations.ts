import {
  AppError,
  BUCKETS,
  openKvBucket,
  putRevocation,
  revocationOf,
  unavailable,
  watchKvBucket,
  type Credential,
  type Logger,
  type NatsHandle,
} from '@wagw/lib';

/**
 * How long start-up waits for the list of revoked tokens before it serves anyway: requests with a token are answered
 * 503 `revocations_loading` until the list is in (no revoked token passes), the rest (health, the console's files) are served.
 */
const LOAD_TIMEOUT_MS = 5_000;

/**
 * How often the quiet watch of revoked tokens checks that the bucket has not moved on without it (`watchKvBucket`):
 * a revocation is refused by every replica within 1 s, so a watch gone blind (its NATS node died) is found behind at
 * the second check after the revocation, 300-600 ms, and refuses (503) from then until it has caught up. One small
 * read per check per gateway replica.
 */
const WATCH_CHECK_MS = 300;

export interface Revocations {
  /**
   * Whether the revocations known here are current: every one stored before this replica started is loaded (false: a
   * start-up that NATS held up), and the watch is not known to be behind (false: its NATS node died, until caught up).
   */
  loaded(): boolean;
  isRevoked(credential: Credential): boolean;
  /** Revokes one of the account's tokens by its id; every replica refuses it within milliseconds (a KV watch). */
  revoke(account: string, tokenId: string): Promise<void>;
  close(): void;
}

/**
 * Why a verified credential no longer holds (revoked, or past its expiry), or null. A request checks it once, as it
 * comes; an open live events stream every second, for as long as it lasts.
 */
export const credentialRefusal = (credential: Credential, revocations: Revocations, now = Date.now()): AppError | null => {
  // Until then a revoked token would pass here, while every other replica refuses it.
  if (!revocations.loaded())
    return unavailable('revocations_loading', "This gateway's list of revoked tokens is not up to date yet (NATS is slow to answer or failing over); retry");
  if (revocations.isRevoked(credential)) return new AppError('unauthenticated', 'token_revoked', 'The token has been revoked');
  if (now >= credential.expiresAt) return new AppError('unauthenticated', 'token_expired', 'The token has expired');
  return null;
};

/** Without NATS (one gateway on its own) there is nowhere to keep revocations: revoking is refused, nothing is revoked. */
export const noRevocations: Revocations = {
  loaded: () => true,
  isRevoked: () => false,
  revoke: async () => {
    throw unavailable('revocation_unavailable', 'Revoking tokens needs the gateway connected to NATS (NATS_URL)');
  },
  close: () => undefined,
};

/** One revocation as kept in memory: the token id and the account that revoked it. */
const revokedKey = (tokenId: string, account: string): string => `${tokenId}\u0000${account}`;

/**
 * Revoked token ids in the KV bucket `revoked_tokens` (`revocationKey`: token id and account; value: the account),
 * watched by every gateway replica into memory, so a request checks a Set, never NATS. A revocation counts only for
 * the account it names: an account can revoke its own tokens, never another's, nor undo another's revocation.
 * Entries of the first format (key: the token id alone) are still read; they only add (a later value written by
 * another account does not take the first one's revocation away from a replica that saw it).
 */
export const openRevocations = async (nats: NatsHandle, logger: Logger): Promise<Revocations> => {
  const kv = await openKvBucket(nats, BUCKETS.revokedTokens);
  const revoked = new Set<string>();
  const stored = (await kv.status()).values;
  let markLoaded: () => void = () => undefined;
  const loaded = new Promise<void>((resolve) => (markLoaded = resolve));
  if (stored === 0) markLoaded();
  const watch = await watchKvBucket(
    nats,
    kv,
    BUCKETS.revokedTokens,
    (entry) => {
      const { tokenId, account } = revocationOf(entry.key, entry.operation === 'PUT' ? entry.string() : '');
      if (entry.operation === 'PUT') revoked.add(revokedKey(tokenId, account));
      else if (entry.key.includes('.')) revoked.delete(revokedKey(tokenId, account));
      if (entry.isUpdate) markLoaded();
    },
    { checkMs: WATCH_CHECK_MS, logger },
  );
  let complete = false;
  void loaded.then(() => {
    complete = true;
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), LOAD_TIMEOUT_MS)));
  if (await Promise.race([loaded.then(() => false), timedOut])) {
    logger.warn('serving before every revoked token was loaded: requests with a token are refused (503) until they are');
    void loaded.then(() => logger.info('every revoked token is loaded'));
  }
  clearTimeout(timer);
  return {
    // A watch found behind the bucket (its consumer lost with a NATS node) may be missing a revocation: refused
    // (503) rather than a revoked token passing, until it has caught up.
    loaded: () => complete && !watch.behind(),
    isRevoked: ({ tokenId, account }) => tokenId !== '' && revoked.has(revokedKey(tokenId, account)),
    revoke: async (account, tokenId) => {
      // Into the bucket opened above: opening it again would wait for NATS, and the request with it, for as long as NATS is down.
      await putRevocation(nats, kv, account, tokenId);
      revoked.add(revokedKey(tokenId, account));
    },
    close: () => watch.stop(),
  };
};
