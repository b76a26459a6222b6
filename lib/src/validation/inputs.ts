import { invalidArgument } from '../errors';
import { INSTANCE_ID_PATTERN } from '../ids';
import { exceedsCharacters, LIMITS } from './rules';

const instanceIdRegex = new RegExp(INSTANCE_ID_PATTERN);

export const assertInstanceId = (instanceId: string): void => {
  if (!instanceIdRegex.test(instanceId)) {
    throw invalidArgument('invalid_instance_id', 'instance_id must be 20 upper-case hexadecimal characters');
  }
};

/**
 * A URL a client hands over to be called (webhook_url, media_url): absolute http(s), at most 2,048 characters, no
 * user name or password (they would be stored in the log and shown in status and history), and no whitespace or
 * control character anywhere: the URL parser drops tabs and line breaks, so the URL called would differ from the one
 * stored and shown; and a port from 1 to 65535. A 400 with `code` otherwise.
 */
export const assertCallableUrl = (url: string, field: string, code: string): void => {
  if (url.length === 0) throw invalidArgument(code, `${field} is required`);
  if (exceedsCharacters(url, LIMITS.url)) throw invalidArgument(code, `${field} must be at most ${LIMITS.url} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(url)) throw invalidArgument(code, `${field} must not contain spaces or control characters (percent-encode them)`);
  // The parser also takes backslashes for slashes (`http:\\host\x`), `http:host/x` and `http:///host/x`, and calls
  // `http://host/x`: written so, the URL stored and shown would not be the one called.
  if (url.includes('\\')) throw invalidArgument(code, `${field} must not contain a backslash (percent-encode it as %5C)`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidArgument(code, `${field} must be an absolute http(s) URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalidArgument(code, `${field} must use http or https`);
  if (!/^https?:\/\/[^/]/i.test(url)) throw invalidArgument(code, `${field} must be written http:// or https:// and then the host`);
  if (parsed.username || parsed.password) throw invalidArgument(code, `${field} must not carry credentials`);
  // The parser refuses a port past 65535 but takes 0 (and 00, ...): no server listens there, so every delivery or
  // fetch would fail only later, after being accepted.
  if (parsed.port === '0') throw invalidArgument(code, `${field} must not use port 0`);
};

/** A webhook URL: see `assertCallableUrl`. */
export const assertWebhookUrl = (url: string): void => assertCallableUrl(url, 'webhook_url', 'invalid_webhook_url');
