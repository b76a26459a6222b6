import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Paths that may carry secrets. Tokens, signing secrets and QR strings never reach the logs (DESIGN §2).
 */
const REDACT = [
  'req.headers.authorization',
  'headers.authorization',
  'access_token',
  '*.access_token',
  'token',
  '*.token',
  'signing_secret',
  '*.signing_secret',
  'signingSecret',
  '*.signingSecret',
  'secret',
  '*.secret',
  'qr',
  '*.qr',
];

/** The one way services create their structured (pino) logger. `LOG_LEVEL` sets the level. */
export const createLogger = (service: string, level = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger =>
  pino({ name: service, level, redact: { paths: REDACT, censor: '[redacted]' } }, destination);

/** Removes credentials from a URL before it is logged. */
export const redactUrl = (url: string): string => url.replace(/([?&]access_token=)[^&#]*/gi, '$1[redacted]');
