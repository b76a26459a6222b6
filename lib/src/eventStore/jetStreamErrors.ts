import { JetStreamApiError } from '@nats-io/jetstream';
import { isAppError, unavailable } from '../errors';
import { isOvertaken } from '../nats';
import { ExpectedVersionConflictError, type AppendOptions } from './port';

/** The append a refusal answered, so that a failed version check reads as the port's conflict. */
export interface RefusedAppend {
  stream: string;
  options: AppendOptions;
}

/**
 * The JetStream client's errors as the event store port's: a version conflict (on an append), unavailable, or a
 * refusal as it is. A request the server refused stays as it is; a server that cannot answer now (5xx: no leader,
 * JetStream temporarily unavailable during an election) is unavailable, like a lost connection.
 */
export const translateStoreError = (error: unknown, connected: boolean, append?: RefusedAppend): unknown => {
  if (isOvertaken(error) && append) return new ExpectedVersionConflictError(append.stream, append.options.expectedVersion);
  if (isAppError(error)) return error;
  if (error instanceof JetStreamApiError && connected && error.status < 500) return error;
  return unavailable('event_store_unavailable', 'The event store (NATS) is unreachable', error);
};
