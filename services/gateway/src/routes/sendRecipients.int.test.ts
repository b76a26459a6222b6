import { issueToken, type SendRequest } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';

// README "send" and "send_group": each route names its recipient its own way, send a `number`, send_group a
// `group_id`. The other route's recipient is not an unknown name to ignore: a client that gives it meant it, and the
// message would go to the recipient left. 400 invalid_recipient, in either form, and nothing is sent.

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';
const GROUP = '120363157211208731@g.us';

describe('send and send_group: one recipient, the route’s own', () => {
  let gateway: FastifyInstance;
  const sent: SendRequest[] = [];

  beforeAll(async () => {
    gateway = await gatewayWithFakes({
      secret: SECRET,
      sessions: { send: async (request: SendRequest) => (sent.push(request), { messageId: 'm_1' }), ready: async () => true, close: () => undefined },
    });
  });
  afterAll(() => gateway.close());
  beforeEach(() => sent.splice(0));

  const headers = { authorization: `Bearer ${issueToken(SECRET, 'acme', 600)}` };
  const call = async (method: 'GET' | 'POST', path: string, fields: Record<string, string>) => {
    const response =
      method === 'GET'
        ? await gateway.inject({ method, url: `${path}?${new URLSearchParams(fields).toString()}`, headers })
        : await gateway.inject({ method, url: path, headers, payload: fields });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
  };
  const text = { instance_id: INSTANCE, type: 'text', message: 'hi' };

  it.each(['GET', 'POST'] as const)('refuses send with a group_id beside its number (%s): 400 invalid_recipient', async (method) => {
    expect(await call(method, '/v1/send', { ...text, number: '4915112345678', group_id: GROUP })).toEqual({
      status: 400,
      body: { error: 'send takes number, not group_id: a message to a group goes to send_group', code: 'invalid_recipient' },
    });
    expect(sent).toEqual([]);
  });

  it.each(['GET', 'POST'] as const)('refuses send_group with a number beside its group_id (%s): 400 invalid_recipient', async (method) => {
    expect(await call(method, '/v1/send_group', { ...text, group_id: GROUP, number: '4915112345678' })).toEqual({
      status: 400,
      body: { error: 'send_group takes group_id, not number: a message to a number goes to send', code: 'invalid_recipient' },
    });
    expect(sent).toEqual([]);
  });

  it('sends with the route’s own recipient', async () => {
    expect((await call('POST', '/v1/send', { ...text, number: '4915112345678' })).status).toBe(200);
    expect((await call('GET', '/v1/send_group', { ...text, group_id: GROUP })).status).toBe(200);
    expect(sent.map((request) => [request.to, request.groupId])).toEqual([
      ['4915112345678', ''],
      ['', GROUP],
    ]);
  });
});
