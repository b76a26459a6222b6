import { connect } from 'node:net';
import { issueToken, type SendRequest } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../test/harness/gatewayWithFakes';
import { HEADERS_TOO_LARGE_ANSWER } from './plugins/errors';

// Product rule: every bad input answers a clear 4xx in the error envelope, never a 500, a hang or a silently altered
// value. The gateway runs over fakes of the services that record what reaches them, so a test sees both the answer
// and whether (and with which values) a call went through.

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';

describe('request input: bad input is refused in the envelope, good input reaches the services unaltered', () => {
  let gateway: FastifyInstance;
  let base: string;
  const sent: SendRequest[] = [];
  const erased: string[] = [];

  beforeAll(async () => {
    const sessions = { send: async (request: SendRequest) => (sent.push(request), { messageId: 'm_1' }), ready: async () => true, close: () => undefined };
    const instances = {
      eraseData: async (_account: string, instanceId: string) => (erased.push(instanceId), { instanceId, dataErasedAt: '2026-11-24T01:00:00.000Z' }),
      ready: async () => true,
      close: () => undefined,
    };
    gateway = await gatewayWithFakes({
      secret: SECRET,
      instances,
      sessions,
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(gateway.server.address() as { port: number }).port}`;
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    sent.splice(0);
    erased.splice(0);
  });

  const auth = () => ({ authorization: `Bearer ${issueToken(SECRET, 'acme', 600)}` });
  const answer = async (response: Response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> });
  const post = async (path: string, body: string) =>
    answer(await fetch(`${base}${path}`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body }));
  const get = async (path: string) => answer(await fetch(`${base}${path}`, { headers: auth() }));
  const SEND = `/v1/send?instance_id=${INSTANCE}&number=4915112345678`;

  describe('JSON bodies are taken as typed, not coerced', () => {
    const location = (latitude: string, longitude = '13.4') =>
      `{"instance_id":"${INSTANCE}","number":"4915112345678","type":"location","latitude":${latitude},"longitude":${longitude}}`;

    it.each([
      ['latitude and longitude null (were 0, 0)', location('null', 'null'), 'body/latitude'],
      ['latitude true (was 1)', location('true'), 'body/latitude'],
      ['latitude [52] (was 52)', location('[52]'), 'body/latitude'],
      ['latitude "52" (was 52)', location('"52"'), 'body/latitude'],
      ['message true (was "true")', `{"instance_id":"${INSTANCE}","number":"4915112345678","type":"text","message":true}`, 'body/message'],
      ['message 12345 (was "12345")', `{"instance_id":"${INSTANCE}","number":"4915112345678","type":"text","message":12345}`, 'body/message'],
      ['number as a JSON number', `{"instance_id":"${INSTANCE}","number":4915112345678,"type":"text","message":"hi"}`, 'body/number'],
    ])('refuses a send with %s: 400 invalid_request naming the field', async (_case, body, field) => {
      expect(await post('/v1/send', body)).toEqual({ status: 400, body: { error: expect.stringContaining(field), code: 'invalid_request' } });
      expect(sent).toEqual([]);
    });

    it('refuses erase_instance_data with a numeric instance_id (was taken as its digits)', async () => {
      const r = await post('/v1/erase_instance_data', '{"instance_id":12345678901234567890}');
      expect(r).toEqual({ status: 400, body: { error: expect.stringContaining('body/instance_id'), code: 'invalid_request' } });
      expect(erased).toEqual([]);
    });

    it('passes typed values through as they are', async () => {
      expect((await post('/v1/send', location('52.5163', '-13.3777'))).status).toBe(200);
      expect(sent[0]?.location).toEqual({ latitude: 52.5163, longitude: -13.3777, name: '' });
    });
  });

  describe('names no operation takes are ignored (README "Input")', () => {
    it("sends with a query's cache-buster and a body's extra field, neither passed on", async () => {
      expect((await get(`${SEND}&type=text&message=hi&_=1764316800000`)).status).toBe(200);
      expect((await post('/v1/send', `{"instance_id":"${INSTANCE}","number":"4915112345678","type":"text","message":"hi","foo":1}`)).status).toBe(200);
      expect(sent.map((request) => [request.text, Object.values(request).includes(1), Object.values(request).includes('1764316800000')])).toEqual([
        ['hi', false, false],
        ['hi', false, false],
      ]);
    });
  });

  describe('querystring numbers are decimal numbers', () => {
    it('still reads a GET form, where every value is text', async () => {
      expect((await get(`${SEND}&type=location&latitude=52.5163&longitude=-1.5e1`)).status).toBe(200);
      expect(sent[0]?.location).toEqual({ latitude: 52.5163, longitude: -15, name: '' });
    });

    it.each([
      ['a blank', '%20'],
      ['a whitespace', '%09%20'],
      ['an empty', ''],
      ['a hexadecimal', '0x10'],
      ['a non-numeric', 'east'],
      ['an overflowing (Infinity, which the sessions service then refused as invalid_longitude)', '1e400'],
    ])('refuses %s longitude (blank was read as 0, hex as its value): 400 invalid_request naming it', async (_case, value) => {
      const r = await get(`${SEND}&type=location&latitude=52&longitude=${value}`);
      expect(r).toEqual({ status: 400, body: { error: expect.stringContaining('querystring/longitude'), code: 'invalid_request' } });
      expect(sent).toEqual([]);
    });
  });

  describe("a URL over 2,048 characters answers its field's code, as every other refusal of that URL", () => {
    const long = `http://example.com/${'x'.repeat(2_049 - 'http://example.com/'.length)}`;
    it.each([
      ['webhook_url', `/v1/set_webhook?instance_id=${INSTANCE}&webhook_url=${encodeURIComponent(long)}&enable=true`, 'invalid_webhook_url'],
      ['media_url', `${SEND}&type=media&media_url=${encodeURIComponent(long)}`, 'invalid_media_url'],
    ])('%s: 400 %s', async (field, path, code) => {
      expect(await get(path)).toEqual({
        status: 400,
        body: { error: `Invalid querystring: querystring/${field} must NOT have more than 2048 characters`, code },
      });
      expect(sent).toEqual([]);
    });
  });

  describe('a query parameter is given once', () => {
    it.each([
      ['type twice', `${SEND}&type=text&type=text&message=a`, 'type'],
      ['limit twice', `/v1/list_instances?limit=5&limit=6`, 'limit'],
      ['enable twice', `/v1/set_webhook?instance_id=${INSTANCE}&webhook_url=http%3A%2F%2Fexample.com%2Fh&enable=true&enable=false`, 'enable'],
    ])('refuses %s: 400 invalid_request saying it came more than once (a list of Ajv errors naming no cause before)', async (_case, path, field) => {
      expect(await get(path)).toEqual({
        status: 400,
        body: { error: `Invalid querystring: querystring/${field} is given more than once: send it once`, code: 'invalid_request' },
      });
      expect(sent).toEqual([]);
    });
  });

  describe('strings are well-formed Unicode', () => {
    const text = (message: string) => `{"instance_id":"${INSTANCE}","number":"4915112345678","type":"text","message":"${message}"}`;

    it.each([
      ['a lone high surrogate', '\\ud800'],
      ['a lone low surrogate inside text', 'a\\udc00b'],
      ['a reversed pair', '\\ude00\\ud83d'],
    ])('refuses a message with %s (was stored as U+FFFD): 400 invalid_request naming the field', async (_case, message) => {
      const r = await post('/v1/send', text(message));
      expect(r).toEqual({ status: 400, body: { error: expect.stringMatching(/body\/message .*surrogate/), code: 'invalid_request' } });
      expect(sent).toEqual([]);
    });

    it('names a nested field at fault by its JSON Pointer, a key or a value', async () => {
      const nested = (extra: string) => text('hi').replace(/}$/, `,"extra":${extra}}`);
      const value = await post('/v1/send', nested('{"a/b":{"c":["ok","\\ud800"]}}'));
      expect(value.body.error).toMatch(/body\/extra\/a~1b\/c\/1 /);
      const key = await post('/v1/send', nested('{"a":{"\\udc00":1}}'));
      expect(key.body.error).toMatch(/body\/extra\/a\/\udc00 |body\/extra\/a\/\S+ must be well-formed/);
      expect(sent).toEqual([]);
    });

    it('walks a deeply nested unknown field without failing (a stack of its own, not recursion)', async () => {
      const deep = `${'['.repeat(20_000)}"ok"${']'.repeat(20_000)}`;
      const body = text('hi').replace(/}$/, `,"extra":${deep}}`);
      expect((await post('/v1/send', body)).status).toBe(200);
    });

    it('passes a surrogate pair (an emoji written as JSON escapes) through', async () => {
      expect((await post('/v1/send', text('hi \\ud83d\\ude00'))).status).toBe(200);
      expect(sent[0]?.text).toBe('hi 😀');
    });
  });

  describe('a query is %-encoded UTF-8', () => {
    it.each([
      ['bytes that are not UTF-8', 'message=%ff%fe', 'message'],
      ['an encoded lone surrogate', 'message=%ED%A0%80', 'message'],
      ['a bad escape', 'message=%zz', 'message'],
      ['a lone %', 'message=50%', 'message'],
      ['an undecodable name', '%ff=1&message=hi', '%ff'],
    ])('refuses %s (was sent as its raw text): 400 invalid_request naming the parameter', async (_case, query, name) => {
      const r = await get(`${SEND}&type=text&${query}`);
      expect(r).toEqual({ status: 400, body: { error: expect.stringContaining(`"${name}"`), code: 'invalid_request' } });
      expect(sent).toEqual([]);
    });

    it('decodes a good one: escapes, + as a space, %2B as +', async () => {
      expect((await get(`${SEND}&type=text&message=%E2%9C%93+ok%2B1`)).status).toBe(200);
      expect(sent[0]?.text).toBe('✓ ok+1');
    });
  });

  describe('a value outside a list is refused naming the values allowed (was "must be equal to constant" once per value)', () => {
    it.each([
      ['send type', `${SEND}&type=image&message=hi`, 'querystring/type must be one of: text, media, location, contact, reaction'],
      [
        'set_webhook enable',
        `/v1/set_webhook?instance_id=${INSTANCE}&webhook_url=https%3A%2F%2Fa.example%2F&enable=yes`,
        'querystring/enable must be one of: true, false',
      ],
      [
        'webhook_deliveries status',
        `/v1/webhook_deliveries?instance_id=${INSTANCE}&status=failed`,
        'querystring/status must be one of: pending, delivered, dead, dropped',
      ],
    ])('%s', async (_case, path, words) => {
      expect(await get(path)).toEqual({ status: 400, body: { error: `Invalid querystring: ${words}`, code: 'invalid_request' } });
    });

    it('in a JSON body too, and keeps the words of other faults', async () => {
      const body = (fields: string) => `{"instance_id":"${INSTANCE}","number":"4915112345678",${fields}}`;
      expect((await post('/v1/send', body('"type":"image","message":"hi"'))).body.error).toBe(
        'Invalid body: body/type must be one of: text, media, location, contact, reaction',
      );
      expect((await post('/v1/send', body('"type":"text","message":"hi","quoted_message_id":5'))).body.error).toBe(
        'Invalid body: body/quoted_message_id must be string',
      );
      expect(sent).toEqual([]);
    });
  });

  describe('a JSON body is UTF-8, as a query is', () => {
    const latin1 = Buffer.concat([
      Buffer.from(`{"instance_id":"${INSTANCE}","number":"4915112345678","type":"text","message":"Gr`),
      Buffer.from([0xfc]),
      Buffer.from('e"}'),
    ]);
    const postBytes = async (body: Uint8Array | ReadableStream<Uint8Array>, type = 'application/json') =>
      answer(await fetch(`${base}/v1/send`, { method: 'POST', headers: { ...auth(), 'content-type': type }, body, duplex: 'half' }));

    it('refuses a Latin-1 body sent as application/json with 400 invalid_json, and sends nothing (was sent with U+FFFD for ü)', async () => {
      expect(await postBytes(latin1)).toEqual({ status: 400, body: { error: expect.stringContaining('not UTF-8'), code: 'invalid_json' } });
      expect(sent).toEqual([]);
    });

    it('refuses a body that says it is Latin-1 (charset=iso-8859-1) with 415 unsupported_media_type, and sends nothing', async () => {
      expect(await postBytes(latin1, 'application/json; charset=iso-8859-1')).toEqual({
        status: 415,
        body: { error: expect.stringContaining('charset=iso-8859-1 is not accepted'), code: 'unsupported_media_type' },
      });
      expect(sent).toEqual([]);
    });

    it('passes UTF-8 through as it is, and still refuses __proto__ and bodies over the limit', async () => {
      expect((await postBytes(Buffer.from(latin1.toString('latin1'), 'utf8'))).status).toBe(200);
      expect(sent[0]?.text).toBe('Grüe');
      const poisoned = `{"instance_id":"${INSTANCE}","number":"4915112345678","type":"text","message":"hi","__proto__":{"x":1}}`;
      expect(await post('/v1/send', poisoned)).toMatchObject({ status: 400, body: { code: 'forbidden_json_key' } });
      // Sent without a length (chunked): the parser's own limit (64 KiB) ends it.
      const big = new ReadableStream<Uint8Array>({
        start: (controller) => {
          for (let i = 0; i < 10; i++) controller.enqueue(Buffer.alloc(10_000, 0x20));
          controller.close();
        },
      });
      expect(await postBytes(big)).toMatchObject({ status: 413, body: { code: 'request_too_large' } });
      expect(sent).toHaveLength(1);
    });
  });

  describe('requests refused below the routes answer the envelope too', () => {
    /** Sends bytes as they are (fetch would refuse to write most of these) and reads the answer until the server closes. */
    const raw = (request: string): Promise<{ status: number; type: string; body: unknown }> =>
      new Promise((resolve, reject) => {
        const socket = connect(Number(new URL(base).port), '127.0.0.1', () => socket.write(request));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('error', () => undefined);
        socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
        socket.on('close', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const end = text.indexOf('\r\n\r\n');
          if (end === -1) return reject(new Error(`no HTTP answer: ${JSON.stringify(text)}`));
          const head = text.slice(0, end);
          const type = /^content-type: *(.*)$/im.exec(head)?.[1] ?? '';
          resolve({ status: Number(head.split(' ')[1]), type, body: JSON.parse(text.slice(end + 4)) as unknown });
        });
      });
    const json = 'Host: x\r\nContent-Type: application/json\r\n';

    it.each([
      ['two different Content-Lengths', `POST /v1/send HTTP/1.1\r\n${json}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`],
      ['Content-Length with chunked', `POST /v1/send HTTP/1.1\r\n${json}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
      ['a bad method token', 'GE(T /v1/status HTTP/1.1\r\nHost: x\r\n\r\n'],
      ['a NUL in a header', 'GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Note: a\u0000b\r\n\r\n'],
    ])('answers %s 400 bad_request (was Node\'s {"message":"Client Error"})', async (_case, request) => {
      expect(await raw(request)).toEqual({
        status: 400,
        type: 'application/json; charset=utf-8',
        body: { error: expect.stringContaining('Malformed HTTP request'), code: 'bad_request' },
      });
    });

    it.each([
      [
        'an Expect other than 100-continue: 417',
        'GET /v1/status HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n',
        417,
        'expectation_failed',
      ],
      ['an HTTP/1.1 request without Host: 400', 'GET /v1/status HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'bad_request'],
      ['an HTTP/1.0 request without Host (it needs none): on to the route', 'GET /v1/status HTTP/1.0\r\n\r\n', 401, 'missing_token'],
    ])('answers %s, in the envelope (Node answered the first two itself, with no body)', async (_case, request, status, code) => {
      expect(await raw(request)).toEqual({ status, type: 'application/json; charset=utf-8', body: { error: expect.any(String), code } });
    });

    it('answers headers over the limit 431 headers_too_large', async () => {
      const r = await raw(`GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`);
      // In the words the OpenAPI document shows for 431.
      expect(r).toEqual({ status: 431, type: 'application/json; charset=utf-8', body: { ...HEADERS_TOO_LARGE_ANSWER } });
    });

    it('answers a path that is not %-encoded UTF-8 400 bad_url (was FST_ERR_BAD_URL)', async () => {
      const r = await raw('GET /v1/sta%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(r).toEqual({ status: 400, type: 'application/json; charset=utf-8', body: { error: expect.stringContaining('/v1/sta%ff'), code: 'bad_url' } });
    });
  });

  describe('an Authorization header sent wrong is an invalid credential, not a missing one', () => {
    const status = (authorization?: string) =>
      fetch(`${base}/v1/erase_instance_data?instance_id=${INSTANCE}`, { headers: authorization === undefined ? {} : { authorization } }).then(answer);
    const token = issueToken(SECRET, 'acme', 600);

    it.each([
      ['a token followed by more', `Bearer ${token} extra`],
      ['another scheme', 'Basic YWNtZTpzZWNyZXQ='],
      ['the scheme alone', 'Bearer'],
    ])('answers %s 401 invalid_token (was missing_token)', async (_case, authorization) => {
      expect(await status(authorization)).toEqual({ status: 401, body: { error: expect.stringContaining('Bearer <token>'), code: 'invalid_token' } });
    });

    it('still answers no credential 401 missing_token, and takes the scheme in any case', async () => {
      expect((await status()).body.code).toBe('missing_token');
      expect((await status(`bearer ${token}`)).status).toBe(200);
    });
  });
});
