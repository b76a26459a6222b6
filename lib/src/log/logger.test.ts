import { Writable } from 'node:stream';
import { createLogger } from './logger';

const capture = () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger('test', 'debug', sink) };
};

describe('createLogger', () => {
  it('logs an error without the raw bytes it carries (rawPacket: a request with its credentials), its other fields kept', () => {
    const { lines, logger } = capture();
    const error = Object.assign(new Error('Parse Error: Header overflow'), {
      code: 'HPE_HEADER_OVERFLOW',
      rawPacket: Buffer.from('GET /v1/status?access_token=tok-in-packet HTTP/1.1'),
      payload: new Uint8Array(Buffer.from('tok-in-bytes')),
    });
    const wrapped = Object.assign(new Error('request failed'), { inner: error });
    logger.warn({ err: wrapped }, 'failed');
    logger.warn({ err: error }, 'failed');
    const text = lines.join('');
    expect(text).not.toContain('"data":[');
    expect(text).not.toContain('tok-in');
    expect(JSON.parse(lines[1]!)).toMatchObject({
      err: { code: 'HPE_HEADER_OVERFLOW', message: 'Parse Error: Header overflow', rawPacket: '[bytes omitted]', payload: '[bytes omitted]' },
    });
    // The error logged is not altered: its owner may still need the bytes.
    expect(Buffer.isBuffer(error.rawPacket)).toBe(true);
  });
});
