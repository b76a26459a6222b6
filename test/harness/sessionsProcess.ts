import { freeFixedPort } from '@wagw/lib';
import { startServiceProcess } from './serviceProcess';

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

export const startSessionsProcess = async (natsUrl: string, replicaId: string, env: Record<string, string> = {}): Promise<SessionsProcess> => {
  const grpcPort = await freeFixedPort();
  const process = await startServiceProcess({
    service: 'sessions',
    label: replicaId,
    startTimeoutMs: 20_000,
    env: {
      NATS_URL: natsUrl,
      SESSIONS_GRPC_ADDRESS: `127.0.0.1:${grpcPort}`,
      OPS_PORT: '0',
      SESSIONS_REPLICA_ID: replicaId,
      WA_CONNECTOR: 'sandbox',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  return { replicaId, grpcPort, pid: process.pid, crash: () => process.crash(), stop: () => process.stop() };
};
