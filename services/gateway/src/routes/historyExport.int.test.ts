import { connect } from 'node:net';
import { issueToken } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import type { InstancesClientApi } from '../instancesClient';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';

// An export holds a scan on the instances service (an ordered consumer, a read-ahead) for as long as its reader
// reads. A client that stops reading but keeps the connection open held them for good: the socket is closed after
// the gateway's idle time-out without a byte moving (HTTP_IDLE_TIMEOUT_MS), and the scan with it.
const SECRET = 's'.repeat(40);
const CHUNK = Buffer.alloc(256 * 1024, 'x');

describe('GET /v1/history/export to a client that stops reading', () => {
  let gateway: FastifyInstance;
  let chunksRead = 0;
  let scanClosed = false;
  afterAll(async () => gateway?.close());

  it('is ended after the idle time-out, and the scan behind it is closed', async () => {
    const instances = {
      ready: async () => true,
      close: () => undefined,
      exportHistory: () =>
        (async function* () {
          try {
            // Bounded: 400 chunks (100 MiB), far more than the socket's buffers hold.
            for (; chunksRead < 400; chunksRead++) yield { ndjson: CHUNK, nextSequence: chunksRead + 1 };
          } finally {
            scanClosed = true;
          }
        })(),
    } as unknown as InstancesClientApi;
    gateway = await gatewayWithFakes({
      secret: SECRET,
      instances,
      idleTimeoutMs: 500,
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    const port = (gateway.server.address() as { port: number }).port;
    const socket = connect(port, '127.0.0.1');
    // Reads the answer's first bytes, then nothing more, the connection left open.
    socket.once('data', () => socket.pause());
    const token = issueToken(SECRET, 'acme', 60);
    socket.write(`GET /v1/history/export?instance_id=ABCDEF0123456789ABCD HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    const started = Date.now();
    // Bounded wait for the scan behind the export to be closed (the gateway ended the connection).
    while (!scanClosed && Date.now() - started < 5_000) await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    expect(scanClosed).toBe(true);
    expect(Date.now() - started).toBeLessThan(4_000);
    // It stopped where the client stopped reading, not at the end of the history.
    expect(chunksRead).toBeLessThan(400);
  });
});
