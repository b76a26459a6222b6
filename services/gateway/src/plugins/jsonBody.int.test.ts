import { gzipSync } from 'node:zlib';
import { issueToken, type SendRequest } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';

// A body the gateway refuses says what is refused and why (README "Errors"), never a misleading "not valid JSON" for
// a valid one; and nothing of it reaches the services.

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';

describe('JSON bodies: refusals name their reason', () => {
  let gateway: FastifyInstance;
  const sent: SendRequest[] = [];

  beforeAll(async () => {
    gateway = await gatewayWithFakes({
      secret: SECRET,
      sessions: { send: async (request: SendRequest) => (sent.push(request), { messageId: 'm_1' }) },
    });
  });
  afterAll(() => gateway.close());
  beforeEach(() => sent.splice(0));

  const send = (payload: string | Buffer, headers: Record<string, string> = {}) =>
    gateway.inject({
      method: 'POST',
      url: '/v1/send',
      headers: { authorization: `Bearer ${issueToken(SECRET, 'acme', 600)}`, 'content-type': 'application/json', ...headers },
      payload,
    });
  const text = (extra = '') => `{"instance_id":"${INSTANCE}","number":"4915112345678","type":"text","message":"hi"${extra}}`;

  describe('prototype poisoning: valid JSON with a __proto__ or constructor.prototype key', () => {
    it.each([
      ['a top-level __proto__', text(',"__proto__":{"isAdmin":true}')],
      ['a nested __proto__', text(',"extra":{"a":[{"__proto__":{}}]}')],
      ['a constructor.prototype', text(',"constructor":{"prototype":{"isAdmin":true}}')],
      // A leading byte order mark (many Windows tools write one) is dropped by the UTF-8 decoding first.
      ['a __proto__ in a body that starts with a byte order mark', `\uFEFF${text(',"__proto__":{"isAdmin":true}')}`],
    ])('refuses %s: 400 forbidden_json_key saying which keys and why, not "not valid JSON"', async (_case, body) => {
      const response = await send(body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        error: 'Body holds a __proto__ or constructor.prototype key, which is refused (prototype poisoning); remove it',
        code: 'forbidden_json_key',
      });
      expect(sent).toEqual([]);
    });

    it('takes a "constructor" key that holds no "prototype", and a "__proto__" inside a string', async () => {
      expect((await send(text(',"constructor":{"name":"x"},"note":"__proto__"'))).statusCode).toBe(200);
    });

    it('still answers a body that is not JSON 400 invalid_json', async () => {
      const response = await send('{"instance_id":');
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ code: 'invalid_json' });
    });
  });

  describe('charset: a JSON body is UTF-8', () => {
    it.each(['latin1', 'ISO-8859-1', '"windows-1252"', 'utf-16'])(
      'refuses Content-Type application/json; charset=%s: 415 unsupported_media_type naming it',
      async (charset) => {
        const response = await send(text(), { 'content-type': `application/json; charset=${charset}` });
        expect(response.statusCode).toBe(415);
        expect(response.json()).toEqual({
          error: `The body must be JSON in UTF-8: charset=${charset.replace(/"/g, '')} is not accepted (send charset=utf-8, or no charset)`,
          code: 'unsupported_media_type',
        });
        expect(sent).toEqual([]);
      },
    );

    it.each(['utf-8', 'UTF-8', 'utf8', '"utf-8"'])('takes charset=%s', async (charset) => {
      expect((await send(text(), { 'content-type': `application/json; charset=${charset}` })).statusCode).toBe(200);
    });
  });

  describe('Content-Encoding: a compressed body is refused, not parsed as if plain', () => {
    it.each([
      ['gzip', gzipSync(text())],
      ['GZip', gzipSync(text())],
      ['br', Buffer.from(text())],
      ['gzip, identity', gzipSync(text())],
    ])('refuses Content-Encoding %s: 415 unsupported_content_encoding with Accept-Encoding: identity', async (encoding, body) => {
      const response = await send(body, { 'content-encoding': encoding });
      expect(response.statusCode).toBe(415);
      expect(response.headers['accept-encoding']).toBe('identity');
      expect(response.json()).toEqual({
        error: `Content-Encoding ${encoding} is not accepted: send the body uncompressed`,
        code: 'unsupported_content_encoding',
      });
      expect(sent).toEqual([]);
    });

    it('is documented: the OpenAPI 415 of a JSON body names it', async () => {
      type Doc = { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> };
      const doc = (await gateway.inject('/v1/openapi.json')).json<Doc>();
      expect(doc.paths['/send']?.post?.responses['415']?.description).toMatch(/Content-Encoding.*unsupported_content_encoding/);
    });

    it.each(['identity', ' Identity ', ''])('takes a plain body with Content-Encoding "%s"', async (encoding) => {
      expect((await send(text(), { 'content-encoding': encoding })).statusCode).toBe(200);
      expect(sent).toHaveLength(1);
    });
  });
});
