import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { PublishNotTakenError } from './jetStreamPublisher';

/** Pause before repeating a publish no server took (a stream leader being elected: ~2-4 s on a 3-node cluster). */
const NOT_TAKEN_RETRY_MS = 100;

/**
 * A stream leader refuses a publish whose command id (10158) or subject under an expected version (10164) is in a
 * publish it has proposed but not yet applied: a client's retry after a lost ack, or a rival writer. Neither is an
 * answer yet; the same publish a moment later is (the duplicate it is, a true conflict with its sequence, or stored).
 */
const IN_PROCESS_CODES: ReadonlySet<number> = new Set([10158, JetStreamApiCodes.StreamWrongLastSequenceUnknown]);
const IN_PROCESS_RETRY_MS = 5;
/** How long to wait before repeating an append that got no answer yet; null: the error is the answer. */
export const retryPauseFor = (error: unknown): number | null => {
  if (error instanceof PublishNotTakenError) return NOT_TAKEN_RETRY_MS;
  return error instanceof JetStreamApiError && IN_PROCESS_CODES.has(error.code) ? IN_PROCESS_RETRY_MS : null;
};
