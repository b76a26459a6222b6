import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalNatsServer, type LocalNatsServer } from '@wagw/lib';

/**
 * A nats-server of the test's own on a free loopback port with a temporary store (never the machine's shared
 * server). `restart()` stops it and starts it again on the same port and store, as an outage would.
 */
export interface TestNats {
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** Stops the server and deletes its store. */
  dispose(): Promise<void>;
}

export const startTestNats = async (): Promise<TestNats> => {
  const storeDir = mkdtempSync(join(tmpdir(), 'wagw-nats-'));
  let server: LocalNatsServer | null = await startLocalNatsServer({ storeDir });
  const port = server.port;
  const stop = async (): Promise<void> => {
    await server?.stop();
    server = null;
  };
  return {
    url: server.url,
    port,
    storeDir,
    stop,
    restart: async () => {
      await stop();
      server = await startLocalNatsServer({ storeDir, port });
    },
    dispose: async () => {
      await stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
};
