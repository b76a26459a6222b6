import { isAppError, type AppError } from '../errors';

/**
 * The exit code of a process stopped at start by a bad setting (sysexits' EX_CONFIG), services and launcher alike. It
 * is not a crash: a restart would be refused the same way, so the launcher (and a supervisor told so, e.g. systemd's
 * RestartPreventExitStatus=78) stops instead of restarting it over and over.
 */
export const EXIT_BAD_CONFIG = 78;

/** A failure to start that a person fixes by changing a setting; its message names the variable and what it takes. */
export const isBadConfig = (error: unknown): error is AppError => isAppError(error) && error.code === 'bad_config';

/** The one line that says why a process did not start: `sessions: failed to start: QR_WAIT_MS must be ...`. */
export const startFailureLine = (name: string, message: string): string => `${name}: failed to start: ${message}`;

/**
 * Set by the launcher on each service it starts with an IPC channel: the service sends its bad setting there (as a
 * message, not a log line to parse: it arrives whatever LOG_LEVEL, even `silent`), and the launcher prints it once.
 * The env variable, not the channel alone, says so: a process forked by another tool (a jest worker) has a channel too.
 */
export const LAUNCHER_IPC_ENV = 'LAUNCHER_IPC';

export interface BadConfigReport {
  type: 'bad_config';
  message: string;
}

export const isBadConfigReport = (value: unknown): value is BadConfigReport =>
  typeof value === 'object' &&
  value !== null &&
  (value as Partial<BadConfigReport>).type === 'bad_config' &&
  typeof (value as Partial<BadConfigReport>).message === 'string';

/** A report not sent within this long is not waited for: the exit code alone still stops the launcher. */
const REPORT_DEADLINE_MS = 2_000;

type Send = (message: BadConfigReport, callback: (error: Error | null) => void) => boolean;

/**
 * Sends a bad setting's message to the launcher that started this process; resolves true once it is on its way, false
 * when not started by the launcher or the channel failed (the caller then logs it itself). Never rejects.
 */
export const reportBadConfigToLauncher = (
  message: string,
  env: NodeJS.ProcessEnv = process.env,
  send: Send | undefined = process.send?.bind(process),
): Promise<boolean> => {
  if (env[LAUNCHER_IPC_ENV] !== '1' || !send) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), REPORT_DEADLINE_MS);
    try {
      send({ type: 'bad_config', message }, (error) => {
        clearTimeout(timer);
        resolve(error === null);
      });
    } catch {
      // The launcher is gone (channel closed): nobody to tell but the log.
      clearTimeout(timer);
      resolve(false);
    }
  });
};
