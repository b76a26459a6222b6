import { Writable } from 'node:stream';
import { createLogger } from '@wagw/lib';
import { requestLoggerFactory } from './requestLogger';

/** A logger at `level` whose lines land in `lines`, as parsed JSON. */
const capture = (level: string): { logger: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } => {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('gateway', level, destination), lines };
};

const flushed = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("a request's logger", () => {
  it('writes the lines of the levels its parent writes, each with the request id, and drops the others', async () => {
    const { logger, lines } = capture('info');
    const log = requestLoggerFactory(logger, { reqId: 'req-7' }, {});
    expect(log.level).toBe('info');
    log.debug({ url: '/v1/status' }, 'request');
    log.warn({ code: 'x' }, 'refused');
    log.error('failed');
    await flushed();
    expect(lines.map((l) => [l.level, l.reqId, l.msg])).toEqual([
      [40, 'req-7', 'refused'],
      [50, 'req-7', 'failed'],
    ]);
  });

  it('keeps a level given for the request (a route log level) and lets it be changed', async () => {
    const { logger, lines } = capture('info');
    const log = requestLoggerFactory(logger, { reqId: 'req-8' }, { level: 'debug' });
    expect(log.level).toBe('debug');
    log.debug('seen');
    log.level = 'error';
    log.warn('not seen');
    await flushed();
    expect(lines.map((l) => l.msg)).toEqual(['seen']);
  });

  it('writes nothing at all when the parent is silent, and a child carries the request id and its own bindings', async () => {
    const silent = capture('silent');
    requestLoggerFactory(silent.logger, { reqId: 'req-9' }, {}).fatal('never');
    const { logger, lines } = capture('info');
    requestLoggerFactory(logger, { reqId: 'req-10' }, {}).child({ part: 'events' }).info('child line');
    await flushed();
    expect(silent.lines).toEqual([]);
    expect(lines).toEqual([expect.objectContaining({ reqId: 'req-10', part: 'events', msg: 'child line' })]);
  });
});
