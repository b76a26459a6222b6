import type { FastifyInstance } from 'fastify';
import { invalidArgument } from '@wagw/lib';
import { HttpRefusal } from './errors';

/**
 * A body is taken as sent: `identity` (or no Content-Encoding). Another coding (gzip, br, ...) was read as if plain,
 * and refused as "not UTF-8", or taken when its bytes happened to be JSON. Decompressing would need a second limit, on
 * the inflated size (a small gzip body can inflate to gigabytes), for bodies of a few KiB: it is refused instead, 415
 * with `Accept-Encoding: identity` (RFC 9110 §8.4.1, RFC 7694 §3).
 */
const IDENTITY = /^\s*(?:identity\s*)?$/i;

/** The charset parameter of a Content-Type (`application/json; charset=latin1` -> `latin1`), or null without one. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;
const UTF_8 = /^utf-?8$/i;

/**
 * A JSON body is UTF-8 (RFC 8259 §8.1): a body that says it is in another charset is refused, 415, rather than read as
 * UTF-8 against its word (its ASCII bodies passed, and the same body with one é failed as "not UTF-8").
 */
const unsupportedCharset = (charset: string) =>
  new HttpRefusal(415, 'unsupported_media_type', `The body must be JSON in UTF-8: charset=${charset} is not accepted (send charset=utf-8, or no charset)`);

const unsupportedEncoding = (encoding: string) =>
  new HttpRefusal(415, 'unsupported_content_encoding', `Content-Encoding ${encoding} is not accepted: send the body uncompressed`, {
    'accept-encoding': 'identity',
  });

/** Fails on the first byte sequence that is not UTF-8, where a plain decoder puts U+FFFD and goes on. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSON bodies are UTF-8 (RFC 8259 §8.1), as a query is %-encoded UTF-8 (querystring.ts): bytes that are not answer
 * 400 `invalid_json`. Fastify's own parser decoded them with U+FFFD in their place, and a message went out altered
 * (a Latin-1 "Grüße" as "Gr\uFFFD\uFFFDe"). The body is read as bytes, within the same body limit, decoded strictly,
 * and handed to Fastify's JSON parser, which keeps its protections: a `__proto__` or `constructor.prototype` key,
 * which code merging the body into an object would turn into a change of every object's prototype, is refused, as
 * 400 `forbidden_json_key`.
 */
export const registerStrictJsonBody = (app: FastifyInstance): void => {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // Every body is JSON: one sent as text/plain (a client that forgot its Content-Type) is a 415 that says so, not a
  // string that fails the schema with "body must be object".
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && !IDENTITY.test(encoding)) {
      done(unsupportedEncoding(encoding.trim()), undefined);
      return;
    }
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && !UTF_8.test(charset)) {
      done(unsupportedCharset(charset), undefined);
      return;
    }
    let text: string;
    try {
      text = strictUtf8.decode(body as Buffer);
    } catch {
      done(invalidArgument('invalid_json', 'Invalid body: the JSON is not UTF-8 (RFC 8259); send it as UTF-8, e.g. C3 A9 for é'), undefined);
      return;
    }
    // Fastify's parser answers through `done`; its type allows a promise, it returns none.
    void parseJson(request, text, (error, value) => {
      // Its one error says "not valid JSON", also for valid JSON it refused for a forbidden key: told that, a client
      // looks for a syntax error it did not make. Checked on the error path only.
      done(error && isJson(text) ? forbiddenKey() : error, value);
    });
  });
};

/** Whether the text is JSON; Fastify's parser refused it then for a forbidden key (it parses as JSON.parse does). */
const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

const forbiddenKey = () =>
  invalidArgument('forbidden_json_key', 'Body holds a __proto__ or constructor.prototype key, which is refused (prototype poisoning); remove it');
