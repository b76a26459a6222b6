import { isAppError, unavailable } from '../errors';
import type { NatsHandle } from './connection';

/**
 * Runs a NATS operation: fails fast while disconnected or when the connection drops while it waits, and reports any
 * client failure as `unavailable`.
 */
export const withNats = async <T>(nats: NatsHandle, operation: () => Promise<T>): Promise<T> => {
  try {
    return await nats.whileConnected(operation);
  } catch (error) {
    if (isAppError(error)) throw error;
    throw unavailable('nats_unavailable', 'NATS is unreachable', error);
  }
};
