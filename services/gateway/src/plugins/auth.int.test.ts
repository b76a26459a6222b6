import { issueToken, type SendRequest } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';
import { rawAnswer, rawHttp } from '../../../../test/harness/rawHttp';

// README "Credential": a request carries one credential, in one place. With two (header and query, header and body,
// query and body) no rule of precedence is guessed at: the one the client meant may not be the one that wins, and a
// wrong one beside a right one would go unnoticed. It answers 401 invalid_token, as access_token twice in the query
// does, and nothing is done.

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';

describe('credentials: one per request', () => {
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

  const token = (account = 'acme') => issueToken(SECRET, account, 600);
  const fields = { instance_id: INSTANCE, number: '4915112345678', type: 'text', message: 'hi' };
  const send = (where: { header?: string; query?: string; body?: unknown }) =>
    gateway.inject({
      method: 'POST',
      url: `/v1/send${where.query === undefined ? '' : `?access_token=${where.query}`}`,
      headers: { 'content-type': 'application/json', ...(where.header !== undefined && { authorization: `Bearer ${where.header}` }) },
      payload: JSON.stringify({ ...fields, ...(where.body !== undefined && { access_token: where.body }) }),
    });

  it.each([
    ['the header', { header: token() }],
    ['the query', { query: token() }],
    ['the body', { body: token() }],
  ])('takes one credential in %s', async (_case, where) => {
    expect((await send(where)).statusCode).toBe(200);
    expect(sent).toHaveLength(1);
  });

  it.each([
    ['the header and the query', { header: token(), query: token() }, /Authorization header and in the query/],
    ['the header and the body', { header: token(), body: token() }, /Authorization header and in the body/],
    ['the query and the body', { query: token(), body: token() }, /query and in the body/],
    ['a valid header and a garbage body token (was ignored)', { header: token(), body: 'garbage' }, /Authorization header and in the body/],
    ['a valid header and a non-string body access_token', { header: token(), body: 42 }, /Authorization header and in the body/],
    ['a garbage header and a valid query token', { header: 'garbage', query: token() }, /Authorization header and in the query/],
    ['two accounts', { header: token('acme'), body: token('other') }, /Authorization header and in the body/],
  ])('refuses credentials in %s: 401 invalid_token, send one credential; nothing sent', async (_case, where, places) => {
    const response = await send(where);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ error: expect.stringMatching(places), code: 'invalid_token' });
    expect(response.json<{ error: string }>().error).toMatch(/send one credential/);
    expect(sent).toEqual([]);
  });

  it.each([
    ['two accounts', ['acme', 'other']],
    ['the same token twice', ['acme', 'acme']],
  ])('refuses two Authorization headers (%s; Node kept the first and dropped the second): 401 invalid_token', async (_case, accounts) => {
    if (!gateway.server.listening) await gateway.listen({ host: '127.0.0.1', port: 0 });
    const port = (gateway.server.address() as { port: number }).port;
    const tokens = accounts.map((account) => token(account));
    const query = new URLSearchParams(fields).toString();
    const request = [`GET /v1/send?${query} HTTP/1.1`, 'Host: gateway', ...tokens.map((t) => `Authorization: Bearer ${t}`), 'Connection: close', '', ''];
    const answer = rawAnswer(await rawHttp(port, request.join('\r\n')));
    expect(answer).toEqual({
      status: 'HTTP/1.1 401 Unauthorized',
      body: { error: 'Authorization header more than once: send one credential', code: 'invalid_token' },
    });
    expect(sent).toEqual([]);
  });

  it.each([
    ['a number', 123],
    ['null', null],
    ['a list', ['a']],
  ])('refuses an access_token in the body that is %s as a field of the wrong type: 400, not a missing credential', async (_case, value) => {
    const response = await send({ body: value });
    expect([response.statusCode, response.json()]).toEqual([400, { error: 'Invalid body: body/access_token must be string', code: 'invalid_request' }]);
    expect(sent).toEqual([]);
  });

  it('refuses the header and the query on a GET too', async () => {
    const query = new URLSearchParams({ ...fields, access_token: token() });
    const response = await gateway.inject({ url: `/v1/send?${query.toString()}`, headers: { authorization: `Bearer ${token()}` } });
    expect([response.statusCode, response.json<{ code: string }>().code]).toEqual([401, 'invalid_token']);
    expect(sent).toEqual([]);
  });
});
