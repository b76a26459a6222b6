import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { freePort } from '@wagw/lib';

const MAIN = join(resolve(__dirname, '../..'), 'services/sessions/dist/main.js');

/** A sessions replica in a process of its own (built by `npm test`), to be killed as a crash would. */
export interface SessionsProcess {
  readonly replicaId: string;
  readonly grpcPort: number;
  readonly pid: number;
  /** SIGKILL: no shutdown, no lease released. */
  crash(): Promise<void>;
  /** SIGTERM and wait for the exit (a clean shutdown hands the leases over). */
  stop(): Promise<void>;
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));

export const startSessionsProcess = async (natsUrl: string, replicaId: string, env: Record<string, string> = {}): Promise<SessionsProcess> => {
  const grpcPort = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      NATS_URL: natsUrl,
      SESSIONS_GRPC_ADDRESS: `127.0.0.1:${grpcPort}`,
      OPS_PORT: '0',
      SESSIONS_REPLICA_ID: replicaId,
      WA_CONNECTOR: 'sandbox',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  const deadline = Date.now() + 20_000;
  while (!output.includes('sessions service started')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`sessions replica ${replicaId} did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    replicaId,
    grpcPort,
    pid: child.pid!,
    crash: async () => {
      child.kill('SIGKILL');
      await exited(child);
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
};
