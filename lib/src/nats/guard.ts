import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
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

const OVERTAKEN_CODES: ReadonlySet<number> = new Set([JetStreamApiCodes.StreamWrongLastSequence, JetStreamApiCodes.StreamWrongLastSequenceUnknown]);

/** JetStream's "wrong last sequence": a compare-and-set write found that another writer came first. */
export const isOvertaken = (error: unknown): boolean => error instanceof JetStreamApiError && OVERTAKEN_CODES.has(error.code);

/** A compare-and-set write (run inside `withNats`), or null when another writer came first. */
export const unlessOvertaken = async <T>(write: Promise<T>): Promise<T | null> => {
  try {
    return await write;
  } catch (error) {
    if (isOvertaken(error)) return null;
    throw error;
  }
};
