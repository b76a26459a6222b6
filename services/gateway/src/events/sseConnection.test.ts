import { EventEmitter } from 'node:events';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import { createLogger, metricsRegistry } from '@wagw/lib';
import type { LiveCall } from './liveCall';
import { serveSse, SSE_DEFAULTS } from './sseConnection';

// serveSse given a response whose reader has already gone (its 'close' came before serveSse could listen for it).

/** A live call that records whether it was cancelled or resumed. */
class FakeCall extends EventEmitter {
  cancelled = false;
  resumed = false;
  cancel(): void {
    this.cancelled = true;
  }
  resume(): this {
    this.resumed = true;
    return this;
  }
}

describe('serveSse', () => {
  let server: Server;
  let closedResponse: Promise<ServerResponse>;
  beforeAll(async () => {
    // Hands over the response once its client has gone.
    closedResponse = new Promise((resolve) => {
      server = createServer((_req, res) => res.once('close', () => resolve(res)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('ends at once, cancelling the call, for a reader that went away before it was served', async () => {
    const req = request({ host: '127.0.0.1', port: (server.address() as { port: number }).port, agent: false });
    req.on('error', () => undefined);
    req.end(() => setTimeout(() => req.destroy(), 20));
    const res = await closedResponse;
    const readers = async (): Promise<number> => (await metricsRegistry.getSingleMetric('sse_readers')!.get()).values[0]?.value ?? 0;
    const before = await readers();
    const call = new FakeCall();
    const stream = serveSse(res, call as unknown as LiveCall, SSE_DEFAULTS, createLogger('sse-test', 'silent'));
    const ended = await Promise.race([stream.done.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 500))]);
    expect({ ended, cancelled: call.cancelled, resumed: call.resumed, readers: await readers() }).toEqual({
      ended: true,
      cancelled: true,
      resumed: false,
      readers: before,
    });
  });
});
