import { consoleToLogger, createLogger, type Logger } from '../log';
import { EXIT_BAD_CONFIG, isBadConfig, reportBadConfigToLauncher, startFailureLine } from './badConfig';

/** A clean shutdown that takes longer than this (NATS gone, a hung close) ends with exit code 1 instead. */
const SHUTDOWN_DEADLINE_MS = 25_000;
/**
 * The same when the launcher is gone: it was SIGKILLed, and its nats-server died with it (it runs under a parent-death
 * signal), so a clean close would wait on NATS until SHUTDOWN_DEADLINE_MS (a webhooks service did, 25 s), holding its
 * ports against the launcher started next.
 */
const ORPHAN_SHUTDOWN_DEADLINE_MS = 5_000;
const PARENT_CHECK_MS = 1_000;

/**
 * Runs a service's entry point: starts it, and on SIGINT/SIGTERM closes it cleanly (within a deadline) and exits.
 * Started by the launcher (`EXIT_WITH_PARENT=1`), it also shuts down when the launcher is gone (even SIGKILLed), so no
 * service outlives it. A bad setting stops it with exit code 78 (EX_CONFIG) and one message naming the variable, sent
 * to the launcher when it started this process (`reportToLauncher`, which resolves false otherwise), else logged.
 */
export const runMain = (
  logger: Logger,
  start: () => Promise<{ close(): Promise<void> }>,
  reportToLauncher: (message: string) => Promise<boolean> = reportBadConfigToLauncher,
): void => {
  const parent = process.ppid;
  // What libraries print (libsignal prints Signal session records, keys included) goes through the logger, text only.
  consoleToLogger(logger);
  // A throw in the executor rejects: a config loader that throws (a bad variable) is reported like any failure to
  // start, not as an uncaught exception's raw stack.
  new Promise<{ close(): Promise<void> }>((resolve) => resolve(start())).then(
    (running) => {
      let stopping = false;
      const stop = (why: string, deadlineMs = SHUTDOWN_DEADLINE_MS): void => {
        if (stopping) return;
        stopping = true;
        logger.info({ why }, 'shutting down');
        setTimeout(() => {
          logger.error({ deadlineMs }, 'shutdown took too long; exiting');
          process.exit(1);
        }, deadlineMs).unref();
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
          if (process.ppid !== parent) stop('the launcher is gone', ORPHAN_SHUTDOWN_DEADLINE_MS);
        }, PARENT_CHECK_MS).unref();
      }
    },
    (error: unknown) => {
      if (!isBadConfig(error)) {
        logger.fatal({ err: error }, 'failed to start');
        process.exit(1);
        return;
      }
      // A bad variable is the operator's to fix, and its message names it: that message alone, no stack to dig through.
      // Under the launcher it is the launcher's to say, once for all services (they may all refuse the same variable).
      void reportToLauncher(error.message).then((reported) => {
        if (!reported) logger.fatal({ code: error.code }, `failed to start: ${error.message}`);
        process.exit(EXIT_BAD_CONFIG);
      });
    },
  );
};

/**
 * A process's logger, made before anything else: a bad `LOG_LEVEL` stops it with one line on stderr and exit code 78,
 * like any bad variable (no logger exists yet to say it; thrown at load, it was an uncaught exception's stack). The
 * launcher reads `LOG_LEVEL` first, so it is the one that says it under `npm start`.
 */
export const mainLogger = (name: string, exit: (code: number) => never = (code) => process.exit(code)): Logger => {
  try {
    return createLogger(name);
  } catch (error) {
    process.stderr.write(`${startFailureLine(name, error instanceof Error ? error.message : String(error))}\n`);
    return exit(isBadConfig(error) ? EXIT_BAD_CONFIG : 1);
  }
};
