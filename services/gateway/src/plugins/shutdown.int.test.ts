import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';

// Every refusal is `{ error, code }` and every 503 carries Retry-After (README "Errors"), also for a request
// that reaches a gateway while it shuts down (a keep-alive connection of a load balancer, a rolling restart): Fastify
// answered it itself (return503OnClosing), with neither.
describe('a request reaching the gateway while it shuts down', () => {
  let gateway: FastifyInstance;
  let release: () => void = () => undefined;
  afterAll(() => release());

  /** A raw connection to the gateway: what it received so far, and when it closed. */
  const rawConnection = (port: number): { socket: Socket; text: () => string; ended: Promise<unknown> } => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    return { socket, text: () => text, ended };
  };
  const within = (promise: Promise<unknown>, ms: number): Promise<unknown> => Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms))]);

  it('answers a request taken before the shutdown with Connection: close, and one arriving during it 503 server_shutting_down', async () => {
    const held = new Promise<boolean>((resolve) => (release = () => resolve(true)));
    gateway = await gatewayWithFakes({
      secret: 's'.repeat(40),
      // /readyz waits here: the first request is still being served when the shutdown begins.
      instances: { ready: () => held },
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    const port = (gateway.server.address() as { port: number }).port;
    const taken = rawConnection(port);
    taken.socket.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');
    // A load balancer's keep-alive connection, its next request under way (its headers not complete yet).
    const arriving = rawConnection(port);
    arriving.socket.write('GET /v1/status?instance_id=ABCDEF0123456789ABCD HTTP/1.1\r\nHost: x\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = gateway.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    arriving.socket.write('\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await within(Promise.all([taken.ended, arriving.ended]), 2_000);
    taken.socket.destroy();
    arriving.socket.destroy();
    await closed;
    // Said keep-alive, the client would send its next request on a connection the closing server ends (ECONNRESET).
    expect(taken.text()).toMatch(/^HTTP\/1\.1 200/);
    expect(taken.text()).toMatch(/\r\nconnection: close/i);
    const refused = arriving.text();
    expect(refused).toMatch(/^HTTP\/1\.1 503/);
    expect({
      retryAfter: /\r\nretry-after: \d+/i.test(refused),
      code: /"code":"server_shutting_down"/.test(refused),
      close: /\r\nconnection: close/i.test(refused),
    }).toEqual({
      retryAfter: true,
      code: true,
      close: true,
    });
  });
});
