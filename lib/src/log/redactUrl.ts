/**
 * What of a URL may be logged. Request URLs carry credentials (`access_token`, a pre-signed `media_url`, a key in a
 * `webhook_url`) and message content (`message`, `vcard`, `name`, `emoji`, the sandbox's `text`, ...: the GET forms
 * take every field in the query). Content is sealed in the event log so that erase_instance_data can destroy it; a log
 * line keeping it would outlive that. So the rule is an allow-list, in this one place: the path, and the values of
 * the parameters below only; every other value is replaced by MARK.
 */

const MARK = '[redacted]';

/** Parameters whose values name things or steer a request (ids, paging, filters, switches, times), never content. */
export const LOGGED_QUERY_PARAMS: ReadonlySet<string> = new Set([
  'instance_id',
  'message_id',
  'quoted_message_id',
  'delivery_id',
  'token_id',
  'limit',
  'cursor',
  'type',
  'types',
  'events',
  'enable',
  'status',
  'since',
  'until',
  'at',
  'seconds',
  'lift',
]);

/** A name as the API spells them (or a typo of one): kept, so a log still shows which parameters a request sent. */
const PARAMETER_NAME = /^[A-Za-z][\w.[\]-]{0,63}$/;
/** A value of an allowed parameter that is what it should be (an id, a number, a list, a time), not a pasted secret or text. */
const PLAIN_VALUE = /^[\w.,:+-]{0,128}$/;

/** A component as the query parser reads it (`+` a space, percent-decoded); null if it does not decode. */
const decoded = (raw: string): string | null => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return null;
  }
};

/** One `name=value` of the query, as it may be logged. */
const loggedParam = (param: string): string => {
  if (param === '') return param;
  const eq = param.indexOf('=');
  const rawName = eq < 0 ? param : param.slice(0, eq);
  const name = decoded(rawName);
  if (name === null || !PARAMETER_NAME.test(name)) return MARK;
  const allowed = LOGGED_QUERY_PARAMS.has(name);
  // A bare word is as likely a piece of a message (`message=fish&chips`, the & not encoded) as a parameter.
  if (eq < 0) return allowed ? param : MARK;
  const value = param.slice(eq + 1);
  const plain = decoded(value);
  return allowed && plain !== null && PLAIN_VALUE.test(plain) ? param : `${rawName}=${MARK}`;
};

/**
 * Credentials in a URL's userinfo (`nats://user:PASSWORD@host`, `nats://TOKEN@host`, `https://u:p@h/`), in a URL or a
 * list of them (`NATS_URL` is comma-separated), schemed or not: the whole userinfo becomes MARK, the user too (alone,
 * it is a token).
 */
export const redactUserinfo = (text: string): string => text.replace(/(^|[\s,]|\/\/)[^\s,/]*@/g, `$1${MARK}@`);

/** Segments of a path no route serves that are logged: the API's version and the name asked for (`/v1/statuss`). */
const UNROUTED_SEGMENTS_KEPT = 2;

/** A path no route serves: its first segments, the rest MARK (a message put in the path: `/v1/send/<text>`). */
const unroutedPath = (path: string): string =>
  path
    .split('/')
    .map((segment, i) => (i <= UNROUTED_SEGMENTS_KEPT || segment === '' ? segment : MARK))
    .join('/');

/**
 * A request URL as it may be logged: its path (only the first segments of one no route serves, `routed` false), and
 * its query with only LOGGED_QUERY_PARAMS' values. The router (find-my-way) ends the path at the first `?` or `#` and
 * parses the rest on `&`, so the query may start at either (`/v1/status#instance_id=X&access_token=T`), and a value
 * runs to the next `&` whatever it holds (`instance_id=X#access_token=T`). A `;` starts it too: a route the router
 * does not match may still be logged.
 */
export const redactUrl = (url: string, routed = true): string => {
  const start = url.search(/[?#;]/);
  // An absolute-form request target (`GET http://user:pass@host/v1/...`) is a path with userinfo.
  const asSent = redactUserinfo(start < 0 ? url : url.slice(0, start));
  const path = routed ? asSent : unroutedPath(asSent);
  if (start < 0) return path;
  const query = url
    .slice(start + 1)
    .split('&')
    .map(loggedParam)
    .join('&');
  return `${path}${url.charAt(start)}${query}`;
};
