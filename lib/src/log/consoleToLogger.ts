import type { Logger } from './logger';

type ConsoleMethod = 'log' | 'info' | 'debug' | 'warn' | 'error';

/** Where each console method's lines go: chatter at debug, warnings and errors as they are. */
const LEVELS: Record<ConsoleMethod, 'debug' | 'warn' | 'error'> = { log: 'debug', info: 'debug', debug: 'debug', warn: 'warn', error: 'error' };

/**
 * Sends what libraries print with `console.*` to the service's logger, as its text only: the first argument when it
 * is a string, never the values after it. libsignal (under Baileys) prints whole Signal session records, private
 * keys and root keys included, with `console.info("Closing session:", session)` on ordinary traffic: raw lines on
 * stdout that no redaction saw and log collectors keep. Answers a function that puts the console back.
 */
export const consoleToLogger = (logger: Logger): (() => void) => {
  const saved = new Map<ConsoleMethod, (...args: unknown[]) => void>();
  for (const method of Object.keys(LEVELS) as ConsoleMethod[]) {
    saved.set(method, console[method].bind(console));
    console[method] = (...args: unknown[]): void => {
      const [first] = args;
      const text = typeof first === 'string' ? first : '(no text)';
      logger[LEVELS[method]]({ source: 'console', dropped: args.length - (typeof first === 'string' ? 1 : 0) }, text);
    };
  }
  return () => {
    for (const [method, original] of saved) console[method] = original;
  };
};
