import { createServer } from 'node:net';
import { createLogger } from '../log';
import { connectNats } from './connection';

// NATS_URL may hold credentials (nats://user:PASSWORD@host, nats://TOKEN@host); they must reach neither the log nor a
// message a command-line tool prints. The servers here are closed ports on 127.0.0.1: nothing answers.

/** A port on 127.0.0.1 that nothing listens on. */
const closedPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
};

describe('connectNats with credentials in NATS_URL', () => {
  it('names the servers without their credentials when it gives up (the message a CLI prints)', async () => {
    const port = await closedPort();
    const url = `nats://alice:PASS-given-up@127.0.0.1:${port},nats://TOKEN-given-up@127.0.0.1:${port}`;
    const failure = connectNats({ url, name: 'test', logger: createLogger('test', 'silent'), giveUpAfterMs: 300 });
    await expect(failure).rejects.toThrow(`NATS at nats://[redacted]@127.0.0.1:${port},nats://[redacted]@127.0.0.1:${port} did not answer`);
  });

  it('logs the servers without their credentials while it waits for NATS', async () => {
    const port = await closedPort();
    const lines: string[] = [];
    // The first warning ends the wait (which would otherwise go on for good): the logger's write throws.
    const stop = new Error('stop waiting');
    const sink = {
      write: (line: string) => {
        lines.push(line);
        if (line.includes('NATS is unreachable')) throw stop;
      },
    };
    const url = `nats://alice:PASS-waiting@127.0.0.1:${port}`;
    await expect(connectNats({ url, name: 'test', logger: createLogger('test', 'info', sink) })).rejects.toBe(stop);
    expect(lines.join('')).not.toContain('PASS-waiting');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ servers: [`nats://[redacted]@127.0.0.1:${port}`] });
  });
});
