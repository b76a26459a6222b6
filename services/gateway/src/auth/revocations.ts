import { BUCKETS, openKvBucket, storeRevocation, unavailable, type Credential, type Logger, type NatsHandle } from '@wagw/lib';

/** How long start-up waits for the list of revoked tokens before serving anyway (and logging that it did). */
const LOAD_TIMEOUT_MS = 5_000;

export interface Revocations {
  isRevoked(credential: Credential): boolean;
  /** Revokes one of the account's tokens by its id; every replica refuses it within milliseconds (a KV watch). */
  revoke(account: string, tokenId: string): Promise<void>;
  close(): void;
}

/** Without NATS (one gateway on its own) there is nowhere to keep revocations: revoking is refused, nothing is revoked. */
export const noRevocations: Revocations = {
  isRevoked: () => false,
  revoke: async () => {
    throw unavailable('revocation_unavailable', 'Revoking tokens needs the gateway connected to NATS (NATS_URL)');
  },
  close: () => undefined,
};

/**
 * Revoked token ids in the KV bucket `revoked_tokens` (key: token id, value: its account), watched by every gateway
 * replica into memory, so a request checks a Map, never NATS. A revocation counts only for the account it names:
 * an account can revoke its own tokens, never another's.
 */
export const openRevocations = async (nats: NatsHandle, logger: Logger): Promise<Revocations> => {
  const kv = await openKvBucket(nats, BUCKETS.revokedTokens);
  const revoked = new Map<string, string>();
  const stored = (await kv.status()).values;
  const watch = await kv.watch({ key: '>' });
  const loaded = new Promise<void>((resolve) => {
    if (stored === 0) resolve();
    void (async () => {
      for await (const entry of watch) {
        if (entry.operation === 'PUT') revoked.set(entry.key, entry.string());
        else revoked.delete(entry.key);
        if (entry.isUpdate) resolve();
      }
    })().catch((error: unknown) => logger.warn({ err: error }, 'watching revoked tokens stopped'));
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), LOAD_TIMEOUT_MS)));
  if (await Promise.race([loaded.then(() => false), timedOut])) logger.warn('serving before every revoked token was loaded');
  clearTimeout(timer);
  return {
    isRevoked: ({ tokenId, account }) => tokenId !== '' && revoked.get(tokenId) === account,
    revoke: async (account, tokenId) => {
      await storeRevocation(nats, account, tokenId);
      revoked.set(tokenId, account);
    },
    close: () => watch.stop(),
  };
};
