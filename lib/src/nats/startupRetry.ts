import { isAppError, unavailable } from '../errors';
import type { Logger } from '../log';

/** One warning per this interval while JetStream does not answer at start-up, not one per attempt. */
const WARN_EVERY_MS = 10_000;
const RETRY_MS = 500;

/**
 * Runs a start-up step that needs JetStream (the account info, creating a stream or bucket) until it succeeds: a
 * cluster that is electing its leaders (measured: ~0.5 s on a fresh 3-node cluster, ~6 s after all nodes restarted)
 * or nodes that are still starting make the service wait, not ready, instead of crash-looping. A configuration error
 * (an `invalid_argument` AppError, e.g. more replicas than servers) is not retried: it stops the service with its message.
 * With `giveUpAfterMs` (a command-line tool, which has no readiness to report) it fails after that long instead,
 * with one message and no warnings.
 */
export const untilJetStreamAnswers = async <T>(logger: Logger, what: string, step: () => Promise<T>, giveUpAfterMs?: number): Promise<T> => {
  let lastWarning = 0;
  const started = Date.now();
  for (;;) {
    try {
      const result = await step();
      if (lastWarning > 0) logger.info({ what, waitedMs: Date.now() - started }, 'JetStream answers again');
      return result;
    } catch (error) {
      if (isAppError(error) && error.kind === 'invalid_argument') throw error;
      if (giveUpAfterMs !== undefined) {
        if (Date.now() - started < giveUpAfterMs) {
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
          continue;
        }
        const reason = error instanceof Error ? error.message : String(error);
        throw unavailable(
          'jetstream_unavailable',
          `${what} did not answer within ${Math.round(giveUpAfterMs / 1000)} s (${reason}): is JetStream enabled on that NATS?`,
        );
      }
      if (Date.now() - lastWarning >= WARN_EVERY_MS) {
        lastWarning = Date.now();
        logger.warn({ err: error, what }, 'JetStream is not available yet; retrying (not ready)');
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
};
