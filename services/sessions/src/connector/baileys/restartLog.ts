import type { BaileysLogger } from './socket';

type LogArgs = [obj: unknown, msg?: string];

/** The `stream:error` WhatsApp ends a socket with to ask for a restart (515): expected right after every pairing. */
const isRestartRequest = (obj: unknown): boolean => {
  if (typeof obj !== 'object' || obj === null || !('node' in obj)) return false;
  const node = (obj as { node?: { tag?: unknown; attrs?: { code?: unknown } } }).node;
  return node?.tag === 'stream:error' && node.attrs?.code === '515';
};

/**
 * Baileys' logger, with its "stream errored out" line for a 515 lowered from error to info: the restart is part of
 * linking a device (baileys.md §6), and an error line on every new link would train operators to ignore errors.
 */
export const restartsAsInfo = (logger: BaileysLogger): BaileysLogger => ({
  get level() {
    return logger.level;
  },
  set level(level: string) {
    logger.level = level;
  },
  child: (bindings) => restartsAsInfo(logger.child(bindings)),
  trace: (...args: LogArgs): void => void logger.trace(...args),
  debug: (...args: LogArgs): void => void logger.debug(...args),
  info: (...args: LogArgs): void => void logger.info(...args),
  warn: (...args: LogArgs): void => void logger.warn(...args),
  error: (...args: LogArgs): void => void (isRestartRequest(args[0]) ? logger.info(...args) : logger.error(...args)),
});
