import { AppError, invalidArgument } from '../errors';

/**
 * The public API's field rules, in one place: the gateway's route schemas (what the OpenAPI document shows and what
 * HTTP rejects with 400) and the services' own checks (gRPC callers) both use these.
 */
export const LIMITS = {
  /** A text message or a caption, characters. */
  text: 4_096,
  /** `media_url` and `webhook_url`, characters. */
  url: 2_048,
  /** A document's file name, characters. */
  filename: 255,
  /** The Idempotency-Key header, visible ASCII characters. */
  idempotencyKey: 255,
  /** Numbers in one check_number request. */
  numbersPerCheck: 50,
} as const;

/** Phone numbers: international digits only, no `+` or separators, 7 to 15 digits. */
export const PHONE_NUMBER_PATTERN = '^[0-9]{7,15}$';
const phoneNumber = new RegExp(PHONE_NUMBER_PATTERN);
export const isPhoneNumber = (value: string): boolean => phoneNumber.test(value);

const idempotencyKey = new RegExp(`^[\\x21-\\x7e]{1,${LIMITS.idempotencyKey}}$`);

/** The Idempotency-Key header of a request: undefined when absent; a malformed one is a 400, never cut short. */
export const idempotencyKeyOf = (headers: Record<string, unknown>): string | undefined => {
  const key = headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !idempotencyKey.test(key)) {
    throw invalidArgument('invalid_idempotency_key', `Idempotency-Key must be 1-${LIMITS.idempotencyKey} visible ASCII characters`);
  }
  return key;
};

/** An instance's lifecycle states (README "States"), in the order an instance usually goes through them. */
export const INSTANCE_STATES = ['created', 'connecting', 'qr', 'connected', 'disconnected', 'logged_out', 'failed'] as const;
export type InstanceLifecycle = (typeof INSTANCE_STATES)[number];

/** A webhook delivery's status (`webhook_deliveries`). */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead', 'dropped'] as const;
export type WebhookDeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * A value from another service (gRPC carries it as a plain string) checked against its list: a value outside it is
 * a bug between services, reported as an internal error rather than passed on to a client.
 */
export const oneOf = <T extends string>(values: readonly T[], value: string, what: string): T => {
  const found = values.find((v) => v === value);
  if (found === undefined) throw new AppError('internal', 'internal', `unexpected ${what}: ${value}`);
  return found;
};

/**
 * Whether `text` holds more than `max` characters, counted as the gateway's JSON schemas count them (code points: an
 * emoji is one character, not two UTF-16 units), so a text the schema takes is not refused behind it. Counted only
 * past `max` UTF-16 units: a text within them is within the limit (the hot path allocates nothing).
 */
export const exceedsCharacters = (text: string, max: number): boolean => {
  if (text.length <= max) return false;
  let count = 0;
  // Code points: a high surrogate followed by a low one is one character.
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    if (++count > max) return true;
  }
  return false;
};

/**
 * Whether the time's date and hour exist: `Date.parse` rolls `2026-11-31` over to December 1st and `T24:00` to the
 * next day, so a query would silently read another day than the one asked for.
 */
const isCalendarDate = (value: string): boolean => {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: that reads the years 0-99 as 1900-1999, and 0050-06-01 would "not exist".
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day && value.slice(11, 13) !== '24';
};

/** RFC 3339 (§5.6 lets `T` and `Z` be lower case). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/;
/** A query decodes + as a space: `at=...T10:00:00+14:00` typed into a URL arrives as `...T10:00:00 14:00`. */
const OFFSET_PLUS_AS_SPACE = / (\d{2}:\d{2})$/;

/** A point in time given as ISO 8601 with a time zone (`2026-11-23T10:00:00Z`); anything else is a 400 naming the field. */
export const parseIsoTime = (value: string, field: string): Date => {
  if (ISO_8601.test(value)) {
    // A minute or second of 60 passes the pattern, and Date.parse refuses it.
    const time = isCalendarDate(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(time)) throw invalidArgument('invalid_time', `${field} names a day or a time of day that does not exist: ${value}`);
    return new Date(time);
  }
  const plusAsSpace = OFFSET_PLUS_AS_SPACE.test(value) && ISO_8601.test(value.replace(OFFSET_PLUS_AS_SPACE, '+$1'));
  const hint = plusAsSpace ? ' (in a query, send the + of the offset as %2B)' : '';
  throw invalidArgument('invalid_time', `${field} must be an ISO 8601 time with a time zone, e.g. 2026-11-23T10:00:00Z${hint}`);
};

/**
 * How far ahead of the server's clock a past moment (`status?at=`) may be: a client asking for "now" by a clock that
 * runs a little ahead of ours is not refused.
 */
export const AT_CLOCK_SKEW_MS = 5_000;

/**
 * A moment to read a state as it was then (`status?at=`): a time as parseIsoTime takes it, at most AT_CLOCK_SKEW_MS
 * after `now`. A later one is a 400: what happens until then is not known yet, and today's state would claim it is.
 */
export const parsePastTime = (value: string, field: string, now: Date): Date => {
  const time = parseIsoTime(value, field);
  const ahead = time.getTime() - now.getTime();
  if (ahead > AT_CLOCK_SKEW_MS) {
    throw invalidArgument(
      'invalid_time',
      `${field} is in the future (${Math.ceil(ahead / 1000)} s after the server's clock, ${now.toISOString()}); give a past moment, or leave ${field} out for now`,
    );
  }
  return time;
};

/** The id of a received message (`in_` and 24 hex digits, derived from the platform's id): mark_read and media take it. */
const INBOUND_ID = 'in_[0-9a-f]{24}';
export const INBOUND_MESSAGE_ID_PATTERN = `^${INBOUND_ID}$`;
const inboundMessageId = new RegExp(INBOUND_MESSAGE_ID_PATTERN);

/** Any message id of an instance's history: ours (`m_` and 24 or 32 hex digits: idempotency-keyed or random) or a received one. */
export const MESSAGE_ID = new RegExp(`^(?:m_[0-9a-f]{24,32}|${INBOUND_ID})$`);

/** A 400 unless `messageId` has the form of a received message's id. */
export const assertInboundMessageId = (messageId: string): void => {
  if (!inboundMessageId.test(messageId)) {
    throw invalidArgument('invalid_message_id', 'message_id must be the id of a received message (in_ and 24 hex digits), as message.received gives it');
  }
};

/** WhatsApp's largest file (documents, 100 MB): the highest media download cap (MEDIA_DOWNLOAD_MAX_BYTES), and the largest sandbox file. */
export const WHATSAPP_FILE_MAX_BYTES = 100 * 1024 * 1024;

/** The kinds of file a simulated contact sends in the sandbox (`/v1/sandbox/inbound`); the sessions service's sandbox makes them. */
export const SANDBOX_MEDIA_KINDS = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type SandboxMediaKind = (typeof SANDBOX_MEDIA_KINDS)[number];
