import { request as httpGet, type IncomingMessage } from 'node:http';
import { Server, ServerCredentials, status, type ServerWritableStream } from '@grpc/grpc-js';
import { createLogger, issueToken, loadSessionsProto, type MediaChunk, type MessageRequest } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { createSessionsClient, type SessionsClientApi } from '../sessionsClient';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';

// GET /v1/media against a sessions service that misbehaves on purpose (a real grpc-js server): what the HTTP client
// gets when the stream fails at each point, and that the call ends when the client goes away.

const SECRET = 's'.repeat(40);
const INSTANCE = '6F1C0A9B3D2E4F5A6B7C';
const PATH = `/v1/media?instance_id=${INSTANCE}&message_id=in_5b0e3c9a1f2d4e6f8a7b9c0d`;
const HEAD: MediaChunk = { mimetype: 'application/pdf', filename: 'a.pdf', size: 200_000 };

type Behaviour = (call: ServerWritableStream<MessageRequest, MediaChunk>) => void;

describe('GET /v1/media over a stream from sessions (fake sessions service)', () => {
  let server: Server;
  let sessions: SessionsClientApi;
  let gateway: FastifyInstance;
  let port: number;
  let behaviour: Behaviour = () => undefined;
  const cancelled: number[] = [];
  const logged: string[] = [];

  beforeAll(async () => {
    server = new Server();
    server.addService(loadSessionsProto().Sessions.service, {
      StreamMedia: (call: ServerWritableStream<MessageRequest, MediaChunk>) => {
        call.on('cancelled', () => cancelled.push(Date.now()));
        behaviour(call);
      },
    });
    const grpcPort = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    sessions = createSessionsClient(`127.0.0.1:${grpcPort}`, 2_000);
    const instances = { get: async (_account: string, instanceId: string) => ({ instanceId }), ready: async () => true, close: () => undefined };
    gateway = await gatewayWithFakes({
      secret: SECRET,
      instances,
      sessions,
      // What the gateway logs at warn or above: a client going away is no fault of the gateway's.
      logger: createLogger('media-test', 'warn', { write: (line: string) => void logged.push(line) }),
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    port = (gateway.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await gateway.close();
    sessions.close();
    server.forceShutdown();
  });
  beforeEach(() => {
    cancelled.splice(0);
    logged.splice(0);
  });

  /** The response, or the client's error once the response broke off. */
  const get = (abortAfterMs?: number): Promise<{ status?: number; type?: string; disposition?: string; body: Buffer; error?: string }> =>
    new Promise((resolve) => {
      const chunks: Buffer[] = [];
      const req = httpGet({ port, path: PATH, headers: { authorization: `Bearer ${issueToken(SECRET, 'acme', 600)}` } }, (res: IncomingMessage) => {
        const head = { status: res.statusCode, type: res.headers['content-type'], disposition: res.headers['content-disposition'] };
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ ...head, body: Buffer.concat(chunks) }));
        res.on('error', (error) => resolve({ ...head, body: Buffer.concat(chunks), error: error.message }));
      });
      req.on('error', (error) => resolve({ body: Buffer.concat(chunks), error: error.message }));
      req.end();
      if (abortAfterMs !== undefined) setTimeout(() => req.destroy(), abortAfterMs);
    });
  const until = async (check: () => boolean, ms = 2_000): Promise<void> => {
    for (const end = Date.now() + ms; !check() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
  };

  it('streams the file whole, with its headers', async () => {
    behaviour = (call) => {
      call.write(HEAD);
      for (let i = 0; i < 4; i++) call.write({ data: Buffer.alloc(50_000, i) });
      call.end();
    };
    const answer = await get();
    expect([answer.status, answer.type, answer.disposition, answer.body.length, answer.error]).toEqual([
      200,
      'application/pdf',
      `attachment; filename="a.pdf"; filename*=UTF-8''a.pdf`,
      200_000,
      undefined,
    ]);
    expect(answer.body.subarray(150_000).every((b) => b === 3)).toBe(true);
  });

  describe("whatever type and name the sender's message gave the file (both come as the sender's app wrote them)", () => {
    const serve = (head: Pick<MediaChunk, 'mimetype' | 'filename'>): Promise<Awaited<ReturnType<typeof get>>> => {
      behaviour = (call) => {
        call.write({ ...head, size: 9 });
        call.write({ data: Buffer.from('%PDF-1.4\n') });
        call.end();
      };
      return get();
    };

    it.each([
      ['a line break', 'application/pdf\r\nx-injected: 1'],
      ['a character beyond Latin-1', 'application/pdf; name=\u20ac'],
      ['no subtype', 'pdf'],
    ])('serves a file whose mimetype has %s as application/octet-stream (was a 500)', async (_case, mimetype) => {
      const answer = await serve({ mimetype, filename: 'a.pdf' });
      expect([answer.status, answer.type, answer.body.toString(), answer.error]).toEqual([200, 'application/octet-stream', '%PDF-1.4\n', undefined]);
    });

    it('names a file of a very long name by its first 200 characters and its extension, in headers a client takes (was ~30 KB)', async () => {
      const answer = await serve({ mimetype: 'application/pdf', filename: `${'\u4e2d'.repeat(3_000)}.pdf` });
      expect([answer.status, answer.error]).toEqual([200, undefined]);
      const name = decodeURIComponent(/filename\*=UTF-8''(.*)$/.exec(answer.disposition ?? '')?.[1] ?? '');
      expect(name).toBe(`${'\u4e2d'.repeat(196)}.pdf`);
    });
  });

  it('answers a failure before the first bytes as a JSON error, not as the file', async () => {
    behaviour = (call) => {
      call.write(HEAD);
      setTimeout(() => call.emit('error', { code: status.UNAVAILABLE, details: 'sessions went away' }), 20);
    };
    const answer = await get();
    expect([answer.status, answer.type, answer.disposition]).toEqual([503, 'application/json; charset=utf-8', undefined]);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ code: 'service_unavailable' });
  });

  it('cuts the response off, short of its length, when the stream ends early: never a complete-looking file', async () => {
    behaviour = (call) => {
      call.write(HEAD);
      call.write({ data: Buffer.alloc(50_000) });
      call.end();
    };
    const answer = await get();
    expect(answer.status).toBe(200);
    expect(answer.error).toBeDefined();
    expect(answer.body.length).toBeLessThan(200_000);
  });

  it('cancels the call when the client goes away, before the head and while the stream stalls', async () => {
    behaviour = () => undefined; // never answers
    const started = Date.now();
    await get(100);
    await until(() => cancelled.length === 1);
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]! - started).toBeLessThan(1_000); // the call's own deadline is 2 s

    behaviour = (call) => {
      call.write(HEAD);
      call.write({ data: Buffer.alloc(50_000) }); // then stalls
    };
    const stalledAt = Date.now();
    const answer = await get(300);
    await until(() => cancelled.length === 2);
    expect(answer.status).toBe(200);
    expect(cancelled).toHaveLength(2);
    expect(cancelled[1]! - stalledAt).toBeLessThan(1_500);
    expect(logged).toEqual([]);
  });

  it('gives up on a sessions service that does not answer in time: 503 service_timeout', async () => {
    behaviour = () => undefined;
    const answer = await get();
    expect([answer.status, (JSON.parse(answer.body.toString()) as { code: string }).code]).toEqual([503, 'service_timeout']);
    await until(() => cancelled.length === 1);
    expect(cancelled).toHaveLength(1);
  });
});
