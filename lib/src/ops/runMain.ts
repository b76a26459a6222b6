import type { Logger } from '../log';

/** A clean shutdown that takes longer than this (NATS gone, a hung close) ends with exit code 1 instead. */
const SHUTDOWN_DEADLINE_MS = 25_000;
const PARENT_CHECK_MS = 1_000;

/**
 * Runs a service's entry point: starts it, and on SIGINT/SIGTERM closes it cleanly (within a deadline) and exits.
 * Started by the launcher (`EXIT_WITH_PARENT=1`), it also shuts down when the launcher is gone (even SIGKILLed), so no
 * service outlives it.
 */
export const runMain = (logger: Logger, start: () => Promise<{ close(): Promise<void> }>): void => {
  const parent = process.ppid;
  start().then(
    (running) => {
      let stopping = false;
      const stop = (why: string): void => {
        if (stopping) return;
        stopping = true;
        logger.info({ why }, 'shutting down');
        setTimeout(() => {
          logger.error({ deadlineMs: SHUTDOWN_DEADLINE_MS }, 'shutdown took too long; exiting');
          process.exit(1);
        }, SHUTDOWN_DEADLINE_MS).unref();
        running.close().then(
          () => process.exit(0),
          (error: unknown) => {
            logger.error({ err: error }, 'unclean shutdown');
            process.exit(1);
          },
        );
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
      if (process.env.EXIT_WITH_PARENT === '1') {
        setInterval(() => {
          if (process.ppid !== parent) stop('the launcher is gone');
        }, PARENT_CHECK_MS).unref();
      }
    },
    (error: unknown) => {
      logger.fatal({ err: error }, 'failed to start');
      process.exit(1);
    },
  );
};
