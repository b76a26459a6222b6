import { Writable } from 'node:stream';
import { createLogger, issueToken, type SendRequest } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';
import { rawHttp } from '../../../../test/harness/rawHttp';

// Product rule (README "Logs"): at debug the gateway logs every request, and never a credential or message content.
// The gateway runs over fakes with its logger at debug, writing into `output`; each test sends what a client might and
// looks for the secrets anywhere in the log.

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';

describe('the gateway log at debug level', () => {
  let gateway: FastifyInstance;
  let port: number;
  let output = '';

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        output += chunk.toString();
        done();
      },
    });
    const sessions = { send: async (_request: SendRequest) => ({ messageId: 'm_1' }), ready: async () => true, close: () => undefined };
    gateway = await gatewayWithFakes({
      secret: SECRET,
      sessions,
      logger: createLogger('logs-test', 'debug', sink),
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    port = (gateway.server.address() as { port: number }).port;
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    output = '';
  });

  const raw = (bytes: string): Promise<string> => rawHttp(port, bytes);

  describe('a request the HTTP parser refused', () => {
    const token = issueToken(SECRET, 'acme', 600);
    const head = `Host: x\r\nAuthorization: Bearer ${token}\r\n`;
    it.each([
      ['duplicate Content-Length', `POST /v1/send?access_token=${token} HTTP/1.1\r\n${head}Content-Length: 9\r\nContent-Length: 8\r\n\r\nsecret-body`, 400],
      ['an invalid method', `G@T /v1/status?access_token=${token} HTTP/1.1\r\n${head}\r\n`, 400],
      ['headers over the limit', `GET /v1/status?access_token=${token} HTTP/1.1\r\n${head}X-Pad: ${'p'.repeat(20_000)}\r\n\r\n`, 431],
    ])('(%s) is logged by its code and status, without the request bytes (token, query, body)', async (_name, bytes, status) => {
      const answer = await raw(bytes);
      expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(output).not.toContain(token);
      expect(output).not.toContain('rawPacket');
      expect(output).not.toContain('secret-body');
      const line = output.split('\n').find((l) => l.includes('malformed request refused'));
      expect(line).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ status, code: expect.stringMatching(/^HPE_/) });
    });
  });

  describe('a request URL', () => {
    const requestLines = () =>
      output
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { msg: string; url?: string })
        .filter((l) => l.msg === 'request');

    it('is logged with its path and safe parameters, the token hidden wherever the query starts (? or #)', async () => {
      const token = issueToken(SECRET, 'acme', 600);
      // fetch would drop a fragment: these go as the bytes a client may send.
      await raw(`GET /v1/status#instance_id=${INSTANCE}&access_token=${token} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      await raw(`GET /v1/status?instance_id=${INSTANCE}#&access_token=${token} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(output).not.toContain(token);
      expect(requestLines().map((l) => l.url)).toEqual([
        `/v1/status#instance_id=${INSTANCE}&access_token=[redacted]`,
        '/v1/status?instance_id=[redacted]&access_token=[redacted]',
      ]);
    });

    it('keeps no message content nor URL credential of a GET send (message, media_url, filename, emoji)', async () => {
      const token = issueToken(SECRET, 'acme', 600);
      const content = {
        message: 'the-meeting-is-at-noon',
        media_url: 'https://s3.example/a.jpg?X-Amz-Signature=presigned-secret',
        filename: 'contract-draft.pdf',
      };
      const query = new URLSearchParams({ instance_id: INSTANCE, number: '4915112345678', type: 'media', ...content, access_token: token });
      const answer = await fetch(`http://127.0.0.1:${port}/v1/send?${query.toString()}`);
      expect(answer.status).toBe(200);
      await fetch(`http://127.0.0.1:${port}/v1/send?instance_id=${INSTANCE}&number=4915112345678&type=reaction&emoji=%F0%9F%8E%89&message_id=m_1`);
      for (const secret of [token, ...Object.values(content), encodeURIComponent(content.media_url), 'presigned-secret', '%F0%9F%8E%89']) {
        expect(output).not.toContain(secret);
      }
      expect(requestLines()[0]!.url).toMatch(new RegExp(`^/v1/send\\?instance_id=${INSTANCE}&number=\\[redacted\\]&type=media&message=\\[redacted\\]`));
    });

    it('keeps only the first two segments of a path no route serves (a message put in the path by mistake)', async () => {
      const answer = await fetch(`http://127.0.0.1:${port}/v1/send/the-meeting-is-at-noon/really?instance_id=${INSTANCE}`);
      expect(answer.status).toBe(404);
      await fetch(`http://127.0.0.1:${port}/v1/statuss?instance_id=${INSTANCE}`);
      expect(output).not.toContain('the-meeting-is-at-noon');
      expect(requestLines().map((l) => l.url)).toEqual([`/v1/send/[redacted]/[redacted]?instance_id=${INSTANCE}`, `/v1/statuss?instance_id=${INSTANCE}`]);
    });
  });
});
