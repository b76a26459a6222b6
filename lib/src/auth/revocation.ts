import type { KV } from '@nats-io/kv';
import { invalidArgument, isAppError, unavailable } from '../errors';
import { BUCKETS } from '../nats/topology';
import { openKvBucket } from '../nats/provision';
import type { NatsHandle } from '../nats/connection';
import { isTokenId } from './tokens';

/** A token id (`jti`) as issued: 32 lower-case hex characters; anything else is a 400. */
export const assertTokenId = (tokenId: string): void => {
  if (!isTokenId(tokenId)) throw invalidArgument('invalid_token_id', 'token_id: the 32 hex characters printed when the token was issued');
};

/**
 * A revocation's KV key: the token id and the account that revoked it (base64url: KV keys take no `@`). Keyed by the
 * id alone, with the account as the value, another account's revocation of the same id replaced it, and the token
 * counted as not revoked again: anyone holding a revoked token (its id is in it) and an account of their own could
 * restore it.
 */
export const revocationKey = (account: string, tokenId: string): string => `${tokenId}.${Buffer.from(account, 'utf8').toString('base64url')}`;

/** The token id and account a revocation's key and value name; a key of the first format (the id alone) has the account as its value. */
export const revocationOf = (key: string, value: string): { tokenId: string; account: string } => {
  const dot = key.indexOf('.');
  if (dot < 0) return { tokenId: key, account: value };
  return { tokenId: key.slice(0, dot), account: Buffer.from(key.slice(dot + 1), 'base64url').toString('utf8') };
};

/**
 * Records in the bucket already open that the account revoked one of its tokens (a revocation counts only for the
 * account it names; gateways watch the bucket). A request calls this: it fails at once while NATS is down (503
 * `revocation_unavailable`), never waits for NATS the way opening a bucket at start-up does.
 */
export const putRevocation = async (nats: NatsHandle, kv: KV, account: string, tokenId: string): Promise<void> => {
  assertTokenId(tokenId);
  try {
    await nats.whileConnected(() => kv.put(revocationKey(account, tokenId), account));
  } catch (error) {
    if (isAppError(error) && error.kind !== 'unavailable') throw error;
    throw unavailable('revocation_unavailable', 'The revocation could not be stored: NATS is unreachable; retry', error);
  }
};

/** The same from a process of its own (the token CLI): opens the bucket first, waiting while JetStream does not answer. */
export const storeRevocation = async (nats: NatsHandle, account: string, tokenId: string): Promise<void> => {
  assertTokenId(tokenId);
  await putRevocation(nats, await openKvBucket(nats, BUCKETS.revokedTokens), account, tokenId);
};
