import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueToken, startLocalNatsCluster, type LocalNatsCluster } from '@wagw/lib';
import { freeFixedPort } from '@wagw/lib';
import { startServiceProcess, type ServiceProcess } from '../harness/serviceProcess';
import type { DrillService, DrillTarget, ReceivedWebhook } from './drill';
import { RawWebhookReceiver } from './receiver';

const JWT_SECRET = 'cluster-drill-secret-that-is-long-enough-for-hs256';

/**
 * Timings that differ from production, and why (test time; none of the issue's figures depends on them):
 * - the sandbox answers in 10/30/60 ms and sends are not paced (SEND_PACING_MS=0, TYPING_MS_PER_CHAR=0), so the load is steady and the
 *   drill short;
 * - WEBHOOK_ACK_WAIT_MS 7 s instead of 60 s: a killed webhooks replica's jobs are retaken after it (else the drill
 *   waits a minute for them); the retry schedule is short for the same reason.
 * Kept as in production: NATS client time-outs, sessions leases (10 s TTL, 3 s renew, 2 s claim sweep), the sends'
 * dispatch ack wait (15 s) and the webhooks sequencer lease (10 s), which decide the recovery the drill measures.
 */
const SANDBOX_ENV = {
  WA_CONNECTOR: 'sandbox',
  SEND_PACING_MS: '0',
  TYPING_MS_PER_CHAR: '0',
  SANDBOX_SENT_DELAY_MS: '10',
  SANDBOX_DELIVERED_DELAY_MS: '30',
  SANDBOX_READ_DELAY_MS: '60',
};
const WEBHOOKS_ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_ACK_WAIT_MS: '7000', WEBHOOK_RETRY_SCHEDULE: '0,500ms,1s,2s,5s,10s,20s' };

export interface ProcessDrillTarget extends DrillTarget {
  /** Where every service's output goes (read it after a failed run). */
  readonly logFile: string;
  dispose(): Promise<void>;
}

/**
 * The drill's deployment as plain processes: a 3-node NATS cluster on loopback (R3), 1 gateway, and 2 replicas each
 * of instances, sessions and webhooks, every one its own `services/<name>/dist/main.js`, with the webhook receiver in
 * this process. Services start in parallel and wait for the cluster by themselves.
 */
export const startProcessDrillTarget = async (replicasPerService = 2): Promise<ProcessDrillTarget> => {
  const logFile = join(tmpdir(), `wagw-cluster-drill-${process.pid}-${Date.now()}.log`);
  const log = createWriteStream(logFile);
  const receiver = new RawWebhookReceiver();
  await receiver.start();
  const natsDir = mkdtempSync(join(tmpdir(), 'wagw-drill-nats-'));
  let cluster: LocalNatsCluster | null = null;
  const replicas = new Map<string, ServiceProcess>();
  let gateway: ServiceProcess | null = null;
  const stopAll = async (): Promise<void> => {
    await gateway?.crash();
    await Promise.all([...replicas.values()].map((r) => r.crash()));
    await cluster?.stop();
    rmSync(natsDir, { recursive: true, force: true });
    await receiver.stop();
    await new Promise((r) => log.end(r));
  };
  try {
    // Client ports outside the ephemeral range too: a killed node restarts on its port some seconds later.
    const natsPorts = [await freeFixedPort(), await freeFixedPort(), await freeFixedPort()];
    cluster = await startLocalNatsCluster({ size: 3, baseDir: natsDir, ports: natsPorts, log });
    const natsUrl = cluster.url;
    const common = { NATS_URL: natsUrl, NATS_REPLICAS: '3', AUTH_JWT_SECRET: JWT_SECRET, LOG_LEVEL: 'info', OPS_HOST: '127.0.0.1', EXIT_WITH_PARENT: '1' };
    const addresses: Record<DrillService, string[]> = { instances: [], sessions: [], webhooks: [] };
    const starts: Promise<void>[] = [];
    for (const service of ['instances', 'sessions', 'webhooks'] as const) {
      for (let n = 1; n <= replicasPerService; n++) {
        const id = `${service}-${n}`;
        const port = await freeFixedPort();
        addresses[service].push(`127.0.0.1:${port}`);
        const env: Record<string, string> = { ...common, OPS_PORT: String(await freeFixedPort()) };
        if (service === 'instances') Object.assign(env, { INSTANCES_GRPC_ADDRESS: `127.0.0.1:${port}`, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
        if (service === 'sessions')
          Object.assign(env, SANDBOX_ENV, { SESSIONS_GRPC_ADDRESS: `127.0.0.1:${port}`, SESSIONS_REPLICA_ID: id, MEDIA_ALLOW_PRIVATE_NETWORKS: 'true' });
        if (service === 'webhooks') Object.assign(env, WEBHOOKS_ENV, { WEBHOOKS_GRPC_ADDRESS: `127.0.0.1:${port}`, WEBHOOKS_WORKER_ID: id });
        starts.push(startServiceProcess({ service, env, label: id, log, startTimeoutMs: 60_000 }).then((p) => void replicas.set(id, p)));
      }
    }
    // Every start is awaited (one failing must not leave the others running unseen), then the first failure thrown.
    const results = await Promise.allSettled(starts);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const port = await freeFixedPort();
    gateway = await startServiceProcess({
      service: 'gateway',
      label: 'gateway',
      log,
      env: {
        ...common,
        WA_CONNECTOR: 'sandbox',
        HOST: '127.0.0.1',
        PORT: String(port),
        INSTANCES_ADDRESS: `ipv4:${addresses.instances.join(',')}`,
        SESSIONS_ADDRESS: `ipv4:${addresses.sessions.join(',')}`,
        WEBHOOKS_ADDRESS: `ipv4:${addresses.webhooks.join(',')}`,
      },
    });
    const running = cluster;
    const replica = (service: DrillService, id: string): ServiceProcess => {
      const found = replicas.get(id);
      if (!found || found.service !== service) throw new Error(`no ${service} replica ${id}`);
      return found;
    };
    return {
      kind: 'processes',
      logFile,
      gatewayUrl: `http://127.0.0.1:${port}`,
      natsUrl,
      token: (account = 'drill') => issueToken(JWT_SECRET, account, 3_600),
      webhookUrl: (path) => receiver.url(path),
      webhooksReceived: async (): Promise<ReceivedWebhook[]> => [...receiver.received],
      natsNodes: async () => running.nodes.map((n) => n.name),
      killNatsNode: (name) => running.node(name).kill(),
      restartNatsNode: (name) => running.node(name).restart(),
      replicas: async (service) => [...replicas.values()].filter((r) => r.service === service).map((r) => r.label),
      killReplica: (service, id) => replica(service, id).crash(),
      restartReplica: (service, id) => replica(service, id).restart(),
      log: (line) => log.write(`[drill] ${new Date().toISOString()} ${line}\n`),
      dispose: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw new Error(`the drill's processes did not start (log: ${logFile}): ${String(error)}`);
  }
};
