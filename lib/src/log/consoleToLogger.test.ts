import { Writable } from 'node:stream';
import { consoleToLogger } from './consoleToLogger';
import { createLogger } from './logger';

describe("a service's console output (what libraries print)", () => {
  it('goes to the logger as its text only: no Signal session record, no key, on stdout or in the log', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const written: string[] = [];
    const stdoutWrite = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const restore = consoleToLogger(createLogger('sessions', 'debug', sink));
    try {
      // As libsignal's session_record.js prints on ordinary traffic.
      const session = {
        indexInfo: { baseKey: Buffer.from('base-key-bytes') },
        currentRatchet: { ephemeralKeyPair: { privKey: Buffer.from('PRIVATE-KEY') }, rootKey: Buffer.from('ROOT-KEY') },
      };
      console.info('Closing session:', session);
      console.warn('Session already closed', session);
      console.error({ privKey: 'PRIVATE-KEY' });
    } finally {
      restore();
      stdoutWrite.mockRestore();
    }
    const text = lines.join('') + written.join('');
    expect(text).not.toMatch(/PRIVATE-KEY|ROOT-KEY|privKey|rootKey|base-key/);
    expect(lines.map((line) => JSON.parse(line) as { level: number; msg: string; dropped: number })).toEqual([
      expect.objectContaining({ level: 20, msg: 'Closing session:', dropped: 1 }),
      expect.objectContaining({ level: 40, msg: 'Session already closed', dropped: 1 }),
      expect.objectContaining({ level: 50, msg: '(no text)', dropped: 1 }),
    ]);
  });
});
