import { request as httpGet, type ClientRequest } from 'node:http';
import { credentials, Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import { issueToken, loadWebhooksProto, metricsRegistry, type StreamEventsFrame, type StreamEventsRequest } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';

// GET /v1/events against a webhooks service (a real grpc-js server) that holds its `ready` frame until told: what
// becomes of the call when the reader goes away, or the gateway shuts down, while the stream is still opening.

const SECRET = 's'.repeat(40);

type Call = ServerWritableStream<StreamEventsRequest, StreamEventsFrame>;

describe('GET /v1/events while the stream opens (fake webhooks service)', () => {
  let server: Server;
  let client: InstanceType<ReturnType<typeof loadWebhooksProto>['Webhooks']>;
  let gateway: FastifyInstance;
  let port: number;
  const calls: Call[] = [];
  const cancelled: Call[] = [];

  beforeAll(async () => {
    const proto = loadWebhooksProto();
    server = new Server();
    server.addService(proto.Webhooks.service, {
      // Answers nothing until the test sends `ready` (a webhooks service busy opening its feed).
      StreamEvents: (call: Call) => {
        calls.push(call);
        call.on('cancelled', () => cancelled.push(call));
      },
    });
    const grpcPort = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    client = new proto.Webhooks(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
  });
  afterAll(() => {
    client.close();
    server.forceShutdown();
  });

  beforeEach(async () => {
    calls.splice(0);
    cancelled.splice(0);
    const webhooks = { streamEvents: (request: StreamEventsRequest) => client.StreamEvents(request), ready: async () => true, close: () => undefined };
    gateway = await gatewayWithFakes({
      secret: SECRET,
      webhooks,
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    port = (gateway.server.address() as { port: number }).port;
  });
  afterEach(async () => {
    for (const call of calls) call.end();
    await gateway.close();
  });

  /** Opens a stream; `body` is what the reader got by the time the response ended (or the request was destroyed). */
  const open = (): { req: ClientRequest; body: Promise<string> } => {
    let req!: ClientRequest;
    const body = new Promise<string>((resolve) => {
      let text = '';
      // One connection per stream (no keep-alive): a shutdown does not wait for an idle one to time out.
      req = httpGet({ port, path: '/v1/events', agent: false, headers: { authorization: `Bearer ${issueToken(SECRET, 'acme', 600)}` } }, (res) => {
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve(text));
        res.on('error', () => resolve(text));
      });
      req.on('error', () => resolve(text));
      req.end();
    });
    return { req, body };
  };
  const until = async (check: () => boolean, ms = 2_000): Promise<boolean> => {
    for (const end = Date.now() + ms; !check() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
    return check();
  };
  const openStreams = async (): Promise<number> => (await metricsRegistry.getSingleMetric('sse_readers')!.get()).values[0]?.value ?? 0;

  it('cancels the call of a reader that went away before the stream started, and keeps no stream for it', async () => {
    const before = await openStreams();
    const { req, body } = open();
    expect(await until(() => calls.length === 1)).toBe(true);
    req.destroy();
    await body;
    // The webhooks service answers `ready` after the reader left: nothing is served, nothing stays open.
    calls[0]!.write({ ready: true });
    expect(await until(() => cancelled.length === 1)).toBe(true);
    expect(await openStreams()).toBe(before);
  });

  it('ends a stream that started while the gateway was shutting down, and the shutdown completes', async () => {
    const { body } = open();
    expect(await until(() => calls.length === 1)).toBe(true);
    const closed = gateway.close().then(() => true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    calls[0]!.write({ ready: true });
    const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 3_000).unref());
    expect(await Promise.race([closed, timeout])).toBe(true);
    expect(await body).toContain('"code":"server_shutdown"');
    expect(await until(() => cancelled.length === 1)).toBe(true);
  });
});
