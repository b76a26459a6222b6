import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';

// Every refusal is `{ error, code }` and every 503 carries Retry-After (README "Errors"), also for a request
// that reaches a gateway while it shuts down (a keep-alive connection of a load balancer, a rolling restart): Fastify
// answered it itself (return503OnClosing), with neither.
describe('a request reaching the gateway while it shuts down', () => {
  let gateway: FastifyInstance;
  let release: () => void = () => undefined;
  afterAll(() => release());

  it('answers 503 server_shutting_down in the envelope with Retry-After, and closes the connection', async () => {
    const held = new Promise<boolean>((resolve) => (release = () => resolve(true)));
    gateway = await gatewayWithFakes({
      secret: 's'.repeat(40),
      // /readyz waits here: the first request is still being served when the shutdown begins.
      instances: { ready: () => held },
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    const port = (gateway.server.address() as { port: number }).port;
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    socket.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = gateway.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The next request on that connection (a load balancer's keep-alive pool) reaches the closing gateway.
    socket.write('GET /v1/status?instance_id=ABCDEF0123456789ABCD HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 2_000))]);
    socket.destroy();
    await closed;
    const second = text.slice(text.indexOf('HTTP/1.1', 1));
    expect(second).toMatch(/^HTTP\/1\.1 503/);
    expect({
      retryAfter: /\r\nretry-after: \d+/i.test(second),
      code: /"code":"server_shutting_down"/.test(second),
      close: /\r\nconnection: close/i.test(second),
    }).toEqual({
      retryAfter: true,
      code: true,
      close: true,
    });
  });
});
