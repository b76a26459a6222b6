import { issueToken } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';
import { WindowCounter } from '../rateLimit/windowCounter';
import { parseCorsOrigins } from './cors';

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';
const APP = 'https://app.example.com';
const SEND = `/v1/send?instance_id=${INSTANCE}&number=4915112345678&type=text&message=hi`;

describe('CORS_ORIGINS', () => {
  it('reads none, any, or a list of origins', () => {
    expect([parseCorsOrigins(undefined), parseCorsOrigins(''), parseCorsOrigins(' , ')]).toEqual([undefined, undefined, undefined]);
    expect(parseCorsOrigins('*')).toBe('*');
    expect(parseCorsOrigins(`${APP}, http://localhost:5173`)).toEqual([APP, 'http://localhost:5173']);
  });

  it.each([
    ['a trailing slash', `${APP}/`],
    ['a path', `${APP}/console`],
    ['no scheme', 'app.example.com'],
    ['another scheme', 'ftp://app.example.com'],
    ['upper case (browsers send the host in lower case)', 'https://App.example.com'],
    ['the default port written out (browsers leave it out)', 'https://app.example.com:443'],
    ['* among origins', `*,${APP}`],
  ])('refuses %s at start with bad_config, as it would never match', (_case, value) => {
    expect(() => parseCorsOrigins(value)).toThrow(expect.objectContaining({ code: 'bad_config' }) as Error);
  });
});

describe('the gateway answers browsers of the allowed origins', () => {
  const start = (corsOrigins?: '*' | string[]) =>
    gatewayWithFakes({
      secret: SECRET,
      sessions: { send: async () => ({ messageId: 'm_1' }) },
      rateLimit: { counter: new WindowCounter({ replicaId: 'r1', syncMs: 60_000 }), settings: { accountMax: 2, anonymousMax: 2, windowMs: 60_000 } },
      ...(corsOrigins ? { corsOrigins } : {}),
    });
  const preflight = (gateway: FastifyInstance, origin: string, url = `/v1/status?instance_id=${INSTANCE}`) =>
    gateway.inject({
      method: 'OPTIONS',
      url,
      headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
  const auth = (account: string) => ({ authorization: `Bearer ${issueToken(SECRET, account, 600)}` });

  describe('with a list of origins', () => {
    let gateway: FastifyInstance;
    beforeAll(async () => {
      gateway = await start([APP]);
    });
    afterAll(() => gateway.close());

    it("answers an allowed origin's preflight 204 with what it may send, uncounted by the rate limit", async () => {
      for (let i = 0; i < 5; i++) {
        const r = await preflight(gateway, APP);
        expect([r.statusCode, r.body]).toEqual([204, '']);
        expect(r.headers).toMatchObject({
          'access-control-allow-origin': APP,
          'access-control-allow-methods': 'GET, HEAD, POST',
          'access-control-allow-headers': 'authorization, content-type, idempotency-key, last-event-id',
          'access-control-max-age': '600',
          vary: 'Origin',
        });
        expect(r.headers['ratelimit-limit']).toBeUndefined();
      }
    });

    it('lets the page read answers, errors and 429s included, and the headers a client acts on', async () => {
      const ok = await gateway.inject({ url: SEND, headers: { origin: APP, ...auth('cors-a') } });
      expect([ok.statusCode, ok.headers['access-control-allow-origin']]).toEqual([200, APP]);
      expect(ok.headers['access-control-expose-headers']).toBe('retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset, content-disposition');
      expect(ok.headers['access-control-allow-credentials']).toBeUndefined();
      const unauthorized = await gateway.inject({ url: SEND, headers: { origin: APP } });
      expect([unauthorized.statusCode, unauthorized.headers['access-control-allow-origin']]).toEqual([401, APP]);
      await gateway.inject({ url: SEND, headers: { origin: APP, ...auth('cors-a') } });
      const limited = await gateway.inject({ url: SEND, headers: { origin: APP, ...auth('cors-a') } });
      expect([limited.statusCode, limited.headers['access-control-allow-origin'], limited.json<{ code: string }>().code]).toEqual([429, APP, 'rate_limited']);
    });

    it('tells another origin nothing: no Access-Control-Allow-Origin, its preflight goes on to 405 like any OPTIONS', async () => {
      const r = await preflight(gateway, 'https://evil.example');
      expect([r.statusCode, r.headers.allow, r.headers['access-control-allow-origin']]).toEqual([405, 'GET', undefined]);
      const get = await gateway.inject({ url: SEND, headers: { origin: 'https://evil.example', ...auth('cors-b') } });
      expect([get.statusCode, get.headers['access-control-allow-origin'], get.headers.vary]).toEqual([200, undefined, 'Origin']);
    });

    it('answers an OPTIONS that is no preflight, and one on an unknown path, as before: 405 with Allow, or 404', async () => {
      const plain = await gateway.inject({ method: 'OPTIONS', url: `/v1/status?instance_id=${INSTANCE}`, headers: { origin: APP } });
      expect([plain.statusCode, plain.headers.allow, plain.json<{ code: string }>().code]).toEqual([405, 'GET', 'method_not_allowed']);
      const unknown = await gateway.inject({ method: 'GET', url: '/v1/nothing', headers: { origin: APP } });
      expect([unknown.statusCode, unknown.json<{ code: string }>().code]).toEqual([404, 'route_not_found']);
    });
  });

  it('with *, answers any origin with *', async () => {
    const gateway = await start('*');
    const r = await preflight(gateway, 'https://anything.example');
    expect([r.statusCode, r.headers['access-control-allow-origin']]).toEqual([204, '*']);
    await gateway.close();
  });

  it('without CORS_ORIGINS, sends no CORS header and answers a preflight 405, as a gateway without CORS', async () => {
    const gateway = await start();
    const r = await preflight(gateway, APP);
    expect([r.statusCode, r.headers.allow, r.headers['access-control-allow-origin']]).toEqual([405, 'GET', undefined]);
    await gateway.close();
  });
});
