import { EventEmitter } from 'node:events';
import { issueToken } from '@wagw/lib';
import type { FastifyInstance } from 'fastify';
import { WindowCounter } from '../rateLimit/windowCounter';
import { gatewayWithFakes } from '../../../../test/harness/gatewayWithFakes';

// GET /v1/events writes its own head (it hijacks the reply): the headers the hooks set, the rate limiter's among
// them, must still reach the reader with its 200.

const SECRET = 's'.repeat(40);

/** A live call of the webhooks service that is ready at once and then sends nothing. */
class IdleCall extends EventEmitter {
  constructor() {
    super();
    setImmediate(() => this.emit('data', { frame: 'ready', ready: true }));
  }
  pause(): this {
    return this;
  }
  resume(): this {
    return this;
  }
  cancel(): void {
    this.removeAllListeners('data');
  }
}

describe('GET /v1/events keeps the headers set before it streams', () => {
  let gateway: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    gateway = await gatewayWithFakes({
      secret: SECRET,
      webhooks: { streamEvents: () => new IdleCall(), ready: async () => true, close: () => undefined },
      rateLimit: {
        counter: new WindowCounter({ replicaId: 'r1', syncMs: 60_000, now: () => 60_000 * 1_000 + 15_000 }),
        settings: { accountMax: 10, anonymousMax: 5, windowMs: 60_000 },
      },
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(gateway.server.address() as { port: number }).port}`;
  });
  afterAll(() => gateway.close());

  it('answers its 200 with the RateLimit-* headers and its own', async () => {
    const reading = new AbortController();
    const response = await fetch(`${base}/v1/events`, {
      headers: { authorization: `Bearer ${issueToken(SECRET, 'acme', 600)}` },
      signal: reading.signal,
    });
    reading.abort();
    expect({
      status: response.status,
      type: response.headers.get('content-type'),
      limit: response.headers.get('ratelimit-limit'),
      remaining: response.headers.get('ratelimit-remaining'),
      reset: response.headers.get('ratelimit-reset'),
    }).toEqual({ status: 200, type: 'text/event-stream; charset=utf-8', limit: '10', remaining: '9', reset: '45' });
  });
});
