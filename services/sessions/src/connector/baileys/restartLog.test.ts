import { Writable } from 'node:stream';
import pino from 'pino';
import { restartsAsInfo } from './restartLog';

const capture = (): { lines: Array<{ level: number; msg: string }>; logger: pino.Logger } => {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, sink) };
};

describe('Baileys log lines', () => {
  it('logs the restart WhatsApp asks for after pairing (515) at info, and other stream errors as errors', async () => {
    const { lines, logger } = capture();
    const log = restartsAsInfo(logger).child({ instanceId: 'I1' });
    log.error({ node: { tag: 'stream:error', attrs: { code: '515' } } }, 'stream errored out');
    log.error({ node: { tag: 'stream:error', attrs: { code: '503' } } }, 'stream errored out');
    log.error(new Error('boom'), 'something else');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [30, 'stream errored out'],
      [50, 'stream errored out'],
      [50, 'something else'],
    ]);
    expect(log.level).toBe('info');
  });
});
