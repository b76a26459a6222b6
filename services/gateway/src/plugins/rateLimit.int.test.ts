import { issueToken, type SendRequest } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { WindowCounter } from '../rateLimit/windowCounter';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';

// Every /v1 request counts and is limited, whatever else would refuse it (a body that is not JSON, a query that is
// not UTF-8, a method the path does not take, a path that does not exist), and every answer says where it stands.

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';
const WINDOW_MS = 60_000;
const ACCOUNT_MAX = 5;
const ANONYMOUS_MAX = 3;

describe('rate limits on every /v1 request', () => {
  let gateway: FastifyInstance;
  let base: string;
  /** The limiter's clock; each test starts 30 s into a window of its own, with every count at 0. */
  let clock = WINDOW_MS * 1_000 + 30_000;
  const sent: SendRequest[] = [];

  beforeAll(async () => {
    const sessions = { send: async (request: SendRequest) => (sent.push(request), { messageId: 'm_1' }), ready: async () => true, close: () => undefined };
    gateway = await gatewayWithFakes({
      secret: SECRET,
      sessions,
      rateLimit: {
        counter: new WindowCounter({ replicaId: 'r1', syncMs: 60_000, now: () => clock }),
        settings: { accountMax: ACCOUNT_MAX, anonymousMax: ANONYMOUS_MAX, windowMs: WINDOW_MS },
      },
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(gateway.server.address() as { port: number }).port}`;
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    clock += WINDOW_MS;
    sent.splice(0);
  });

  const bearer = (account: string) => ({ authorization: `Bearer ${issueToken(SECRET, account, 600)}` });
  const SEND = `/v1/send?instance_id=${INSTANCE}&number=4915112345678&type=text&message=hi`;

  /** The requests refused before any route runs, each with the answer it gets under the limit. */
  const refusedEarly: Array<[string, (headers: Record<string, string>) => Promise<Response>, number, string]> = [
    [
      'POST /v1/send with invalid JSON',
      (headers) => fetch(`${base}/v1/send`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"instance_id":' }),
      400,
      'invalid_json',
    ],
    ['GET /v1/send?message=%ff', (headers) => fetch(`${base}/v1/send?message=%ff`, { headers }), 400, 'invalid_request'],
    ['DELETE /v1/send', (headers) => fetch(`${base}/v1/send`, { method: 'DELETE', headers }), 405, 'method_not_allowed'],
    ['GET /v1/no_such_route', (headers) => fetch(`${base}/v1/no_such_route`, { headers }), 404, 'route_not_found'],
  ];

  const answer = async (response: Response) => ({
    status: response.status,
    code: ((await response.json()) as { code: string }).code,
    limit: response.headers.get('ratelimit-limit'),
    remaining: response.headers.get('ratelimit-remaining'),
    retryAfter: response.headers.get('retry-after'),
  });

  it.each(refusedEarly)('counts %s without a credential for its address, and limits it there', async (_name, request, status, code) => {
    for (let i = 1; i <= ANONYMOUS_MAX; i++) {
      expect(await answer(await request({}))).toEqual({ status, code, limit: String(ANONYMOUS_MAX), remaining: String(ANONYMOUS_MAX - i), retryAfter: null });
    }
    expect(await answer(await request({}))).toEqual({ status: 429, code: 'rate_limited', limit: String(ANONYMOUS_MAX), remaining: '0', retryAfter: '30' });
  });

  it.each(refusedEarly)('counts %s with a valid credential for its account, and limits it there', async (_name, request, status, code) => {
    const headers = bearer(`acct-${status}-${code}`);
    for (let i = 1; i <= ACCOUNT_MAX; i++) {
      expect(await answer(await request(headers))).toEqual({ status, code, limit: String(ACCOUNT_MAX), remaining: String(ACCOUNT_MAX - i), retryAfter: null });
    }
    expect(await answer(await request(headers))).toEqual({ status: 429, code: 'rate_limited', limit: String(ACCOUNT_MAX), remaining: '0', retryAfter: '30' });
  });

  it('counts a request whose credential is in its JSON body for its account, not for its address', async () => {
    const body = JSON.stringify({
      instance_id: INSTANCE,
      number: '4915112345678',
      type: 'text',
      message: 'hi',
      access_token: issueToken(SECRET, 'body-acct', 600),
    });
    const post = async () => answer(await fetch(`${base}/v1/send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }));
    // More than the address may send without a credential: all count for the account.
    for (let i = 1; i <= ACCOUNT_MAX; i++) {
      expect(await post()).toEqual({ status: 200, code: undefined, limit: String(ACCOUNT_MAX), remaining: String(ACCOUNT_MAX - i), retryAfter: null });
    }
    expect(await post()).toEqual({ status: 429, code: 'rate_limited', limit: String(ACCOUNT_MAX), remaining: '0', retryAfter: '30' });
    expect(sent).toHaveLength(ACCOUNT_MAX);
    // The address's own count was given back each time.
    expect(await answer(await fetch(`${base}${SEND}`))).toMatchObject({ status: 401, remaining: String(ANONYMOUS_MAX - 1) });
  });

  it('still answers 401 without a valid credential in the body, counted for the address', async () => {
    const body = JSON.stringify({ instance_id: INSTANCE, number: '4915112345678', type: 'text', message: 'hi', access_token: 'not-a-token' });
    const post = async () => answer(await fetch(`${base}/v1/send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }));
    expect(await post()).toEqual({ status: 401, code: 'invalid_token', limit: String(ANONYMOUS_MAX), remaining: String(ANONYMOUS_MAX - 1), retryAfter: null });
    expect(sent).toEqual([]);
  });

  it('leaves the routes outside the API uncounted (docs, health)', async () => {
    for (let i = 0; i <= ANONYMOUS_MAX; i++) expect((await fetch(`${base}/v1/openapi.json`)).status).toBe(200);
    expect((await answer(await fetch(`${base}${SEND}`))).remaining).toBe(String(ANONYMOUS_MAX - 1));
  });
});

describe('a limit of 0 is no limit', () => {
  const at = WINDOW_MS * 1_000 + 30_000;
  const withLimits = async (accountMax: number, anonymousMax: number): Promise<{ gateway: FastifyInstance; base: string }> => {
    const sessions = { send: async () => ({ messageId: 'm_1' }), ready: async () => true, close: () => undefined };
    const gateway = await gatewayWithFakes({
      secret: SECRET,
      sessions,
      rateLimit: {
        counter: new WindowCounter({ replicaId: 'r1', syncMs: 60_000, now: () => at }),
        settings: { accountMax, anonymousMax, windowMs: WINDOW_MS },
      },
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    return { gateway, base: `http://127.0.0.1:${(gateway.server.address() as { port: number }).port}` };
  };
  const SEND = `/v1/send?instance_id=${INSTANCE}&number=4915112345678&type=text&message=hi`;
  const token = issueToken(SECRET, 'unlimited', 600);

  it('RATE_LIMIT_ACCOUNT_MAX=0: an account is never refused and is told no limit (no RateLimit-* headers); requests without a credential still are', async () => {
    const { gateway, base } = await withLimits(0, 2);
    try {
      for (let i = 0; i < 6; i++) {
        const response = await fetch(`${base}${SEND}`, { headers: { authorization: `Bearer ${token}` } });
        expect([response.status, response.headers.get('ratelimit-limit'), response.headers.get('ratelimit-remaining')]).toEqual([200, null, null]);
      }
      const anonymous = [];
      for (let i = 0; i < 3; i++) anonymous.push((await fetch(`${base}${SEND}`)).status);
      expect(anonymous).toEqual([401, 401, 429]);
    } finally {
      await gateway.close();
    }
  });

  it('RATE_LIMIT_ANONYMOUS_MAX=0: requests without a credential are not limited, and a body credential still counts for its account', async () => {
    const { gateway, base } = await withLimits(3, 0);
    try {
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`${base}${SEND}`);
        expect([response.status, response.headers.get('ratelimit-limit')]).toEqual([401, null]);
      }
      const body = JSON.stringify({ instance_id: INSTANCE, number: '4915112345678', type: 'text', message: 'hi', access_token: token });
      const posted = [];
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${base}/v1/send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        posted.push([response.status, response.headers.get('ratelimit-remaining')]);
      }
      expect(posted).toEqual([
        [200, '2'],
        [200, '1'],
        [200, '0'],
        [429, '0'],
      ]);
    } finally {
      await gateway.close();
    }
  });
});
