import { issueToken, type SendRequest } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';
import { rawAnswer, rawHttp } from '../../../../test/harness/rawHttp';

// README "Idempotency" and "Live events": Idempotency-Key and Last-Event-ID hold one value. Given twice, Node would
// join them with ", " (a malformed key, an unknown event id), so the client would hear that its value is wrong when
// it sent two: 400 with the header's own code saying so, and nothing is done.

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';

describe('headers that hold one value', () => {
  let gateway: FastifyInstance;
  let port: number;
  const sent: SendRequest[] = [];
  let streamsOpened = 0;

  beforeAll(async () => {
    gateway = await gatewayWithFakes({
      secret: SECRET,
      sessions: { send: async (request: SendRequest) => (sent.push(request), { messageId: 'm_1' }) },
      webhooks: {
        streamEvents: () => {
          streamsOpened++;
          throw new Error('no stream may open in these tests');
        },
        ready: async () => true,
        close: () => undefined,
      },
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    port = (gateway.server.address() as { port: number }).port;
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    sent.splice(0);
    streamsOpened = 0;
  });

  const token = issueToken(SECRET, 'acme', 600);
  const request = (line: string, headers: string[], auth = `Bearer ${token}`) =>
    rawHttp(port, [line, 'Host: gateway', `Authorization: ${auth}`, ...headers, 'Connection: close', '', ''].join('\r\n'));
  const SEND = `GET /v1/send?instance_id=${INSTANCE}&number=4915112345678&type=text&message=hi HTTP/1.1`;

  it.each([
    ['two keys', ['Idempotency-Key: order-1', 'Idempotency-Key: order-2']],
    ['the same key twice', ['Idempotency-Key: order-1', 'idempotency-key: order-1']],
  ])('refuses Idempotency-Key given twice (%s): 400 invalid_idempotency_key saying so; nothing sent', async (_case, headers) => {
    expect(rawAnswer(await request(SEND, headers))).toEqual({
      status: 'HTTP/1.1 400 Bad Request',
      body: { error: 'Idempotency-Key given more than once: send one', code: 'invalid_idempotency_key' },
    });
    expect(sent).toEqual([]);
  });

  it('takes one Idempotency-Key, and tells a key holding ", " by its characters (it is one malformed key, not two)', async () => {
    expect(rawAnswer(await request(SEND, ['Idempotency-Key: order-1'])).status).toBe('HTTP/1.1 200 OK');
    expect(sent.map((s) => s.idempotencyKey)).toEqual(['order-1']);
    expect(rawAnswer(await request(SEND, ['Idempotency-Key: a, b'])).body).toEqual({
      error: 'Idempotency-Key must be 1-255 visible ASCII characters',
      code: 'invalid_idempotency_key',
    });
  });

  it('refuses Last-Event-ID given twice: 400 invalid_last_event_id saying so; no stream opens', async () => {
    const answer = await request('GET /v1/events HTTP/1.1', ['Last-Event-ID: evt_5_0', 'Last-Event-ID: evt_9_0']);
    expect(rawAnswer(answer)).toEqual({
      status: 'HTTP/1.1 400 Bad Request',
      body: { error: 'Last-Event-ID given more than once: send one', code: 'invalid_last_event_id' },
    });
    expect(streamsOpened).toBe(0);
  });

  it('refuses a Last-Event-ID over 64 characters with its own code, as any other malformed one', async () => {
    const answer = await request('GET /v1/events HTTP/1.1', [`Last-Event-ID: evt_${'1'.repeat(61)}`]);
    expect(rawAnswer(answer)).toEqual({
      status: 'HTTP/1.1 400 Bad Request',
      body: { error: 'Invalid headers: headers/last-event-id must NOT have more than 64 characters', code: 'invalid_last_event_id' },
    });
    expect(streamsOpened).toBe(0);
  });

  it('checks the credential first: without a valid one it is 401, whatever else is wrong', async () => {
    const answer = await request(SEND, ['Idempotency-Key: a', 'Idempotency-Key: b'], 'Bearer garbage');
    expect(rawAnswer(answer)).toEqual({ status: 'HTTP/1.1 401 Unauthorized', body: expect.objectContaining({ code: 'invalid_token' }) });
  });
});
