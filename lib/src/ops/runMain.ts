import type { Logger } from '../log';

/** Runs a service's entry point: starts it, and on SIGINT/SIGTERM closes it cleanly and exits. */
export const runMain = (logger: Logger, start: () => Promise<{ close(): Promise<void> }>): void => {
  start().then(
    (running) => {
      const stop = (): void => {
        logger.info('shutting down');
        running.close().then(
          () => process.exit(0),
          (error: unknown) => {
            logger.error({ err: error }, 'unclean shutdown');
            process.exit(1);
          },
        );
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    },
    (error: unknown) => {
      logger.fatal({ err: error }, 'failed to start');
      process.exit(1);
    },
  );
};
