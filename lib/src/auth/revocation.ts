import { invalidArgument } from '../errors';
import { BUCKETS } from '../nats/topology';
import { openKvBucket } from '../nats/provision';
import type { NatsHandle } from '../nats/connection';
import { isTokenId } from './tokens';

/** A token id (`jti`) as issued: 32 lower-case hex characters; anything else is a 400. */
export const assertTokenId = (tokenId: string): void => {
  if (!isTokenId(tokenId)) throw invalidArgument('invalid_token_id', 'token_id: the 32 hex characters printed when the token was issued');
};

/**
 * Records that the account revoked one of its tokens: key = token id, value = the account (a revocation counts only
 * for the account it names, so no account can revoke another's tokens). Gateways watch the bucket.
 */
export const storeRevocation = async (nats: NatsHandle, account: string, tokenId: string): Promise<void> => {
  assertTokenId(tokenId);
  const kv = await openKvBucket(nats, BUCKETS.revokedTokens);
  await nats.whileConnected(() => kv.put(tokenId, account));
};
