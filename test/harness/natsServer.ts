import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalNatsCluster, startLocalNatsServer, type LocalNatsCluster, type LocalNatsServer } from '@wagw/lib';

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
  /**
   * Stops the server's process where it is (SIGSTOP): a machine that hangs, its connections open and silent. Resolves
   * once the kernel reports the process stopped, so that nothing the test sends next can still be answered.
   */
  freeze(): Promise<void>;
  /** Lets a frozen server run on (SIGCONT). */
  thaw(): void;
  /** Stops the server and deletes its store. */
  dispose(): Promise<void>;
}

/** Waits (at most 2 s) until /proc says the process is stopped (state T): a signal is sent at once but taken later. */
const untilStopped = async (pid: number): Promise<void> => {
  const deadline = Date.now() + 2_000;
  for (;;) {
    // The state is the first field after the command's closing parenthesis (the command may hold spaces).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'T') return;
    if (Date.now() > deadline) throw new Error(`nats-server ${pid} is not stopped 2 s after SIGSTOP (state ${state})`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

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
    freeze: async () => {
      if (!server) throw new Error('freeze: the server is not running');
      process.kill(server.pid, 'SIGSTOP');
      await untilStopped(server.pid);
    },
    thaw: () => server && process.kill(server.pid, 'SIGCONT'),
    dispose: async () => {
      await stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
};

/** A 3-node (by default) JetStream cluster of the test's own on loopback, with temporary stores. */
export interface TestNatsCluster extends LocalNatsCluster {
  /** Stops every node and deletes the stores. */
  dispose(): Promise<void>;
}

export const startTestNatsCluster = async (size = 3): Promise<TestNatsCluster> => {
  const baseDir = mkdtempSync(join(tmpdir(), 'wagw-nats-cluster-'));
  const cluster = await startLocalNatsCluster({ size, baseDir });
  return {
    ...cluster,
    dispose: async () => {
      await cluster.stop();
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
};
