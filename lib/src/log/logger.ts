import pino, { type DestinationStream, type Logger } from 'pino';
import { invalidArgument } from '../errors';

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

type SerializedError = ReturnType<typeof pino.stdSerializers.err>;

/** The levels pino knows, quietest last; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * `LOG_LEVEL`: unset or empty (as .env files often leave it) is the fallback, as for every variable; an unknown level
 * stops start-up with one message listing the levels (pino's own, "default level:... custom levels", named neither).
 */
export const logLevelFromEnv = (env: Record<string, string | undefined> = process.env, fallback = 'info'): string => {
  const level = env.LOG_LEVEL;
  if (level === undefined || level === '') return fallback;
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw invalidArgument('bad_config', `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
  return level;
};

/**
 * Drops the raw bytes an error carries from its serialized copy: Node's HTTP parser puts the whole refused request on
 * its errors (`rawPacket`: Authorization header, URL with access_token, body), and pino copies every property of an
 * error. Bytes are never worth a log line. Only the fresh copies pino made (the error and the errors nested in it) are
 * changed; the logged error keeps its bytes.
 */
const withoutBytes = (serialized: SerializedError, depth = 0): SerializedError => {
  const fresh = Object.getPrototypeOf(serialized) as object;
  const fields = serialized as unknown as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (value instanceof Uint8Array) fields[key] = '[bytes omitted]';
    else if (depth < 4 && typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === fresh) {
      withoutBytes(value as SerializedError, depth + 1);
    }
  }
  const aggregate: unknown = fields.aggregateErrors;
  if (Array.isArray(aggregate)) aggregate.forEach((e: SerializedError) => withoutBytes(e, depth + 1));
  return serialized;
};

const errSerializer = (err: Error): SerializedError => {
  const serialized = pino.stdSerializers.err(err);
  // Not an error (a string logged as err): pino gives it back as it came.
  return typeof serialized === 'object' && serialized !== null ? withoutBytes(serialized) : serialized;
};

/** The one way services create their structured (pino) logger. `LOG_LEVEL` sets the level. */
export const createLogger = (service: string, level = logLevelFromEnv(), destination?: DestinationStream): Logger =>
  pino({ name: service, level, redact: { paths: REDACT, censor: '[redacted]' }, serializers: { err: errSerializer } }, destination);
