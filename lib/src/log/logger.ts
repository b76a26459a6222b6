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

/** A query parameter's name as the server reads it (percent-decoded; one that does not decode is left as written). */
const paramName = (raw: string): string => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
};

/**
 * Removes credentials from a URL before it is logged: the value of every `access_token` parameter, its name matched
 * as the query parser reads it (`access%5Ftoken` is the same parameter, and was logged in clear).
 */
export const redactUrl = (url: string): string => {
  const query = url.indexOf('?');
  if (query < 0) return url;
  const end = url.indexOf('#', query);
  const params = url.slice(query + 1, end < 0 ? undefined : end).split('&');
  const redacted = params.map((param) => {
    const eq = param.indexOf('=');
    return eq >= 0 && paramName(param.slice(0, eq)).toLowerCase() === 'access_token' ? `${param.slice(0, eq)}=[redacted]` : param;
  });
  return `${url.slice(0, query + 1)}${redacted.join('&')}${end < 0 ? '' : url.slice(end)}`;
};
