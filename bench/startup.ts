import { readFileSync } from 'node:fs';
import {
  CheckpointStore,
  connectNats,
  createLogger,
  DURABLES,
  freeFixedPort,
  INSTANCE_STATES_MODEL,
  instanceEvent,
  instanceStream,
  JetStreamEventStore,
  STREAMS,
  type NatsHandle,
  type NewEvent,
} from '@wagw/lib';
import { startServiceProcess, type ServiceName } from '../test/harness/serviceProcess';
import { envPositiveInt, log, pool, startBenchNats, timed } from './common';

export interface StartupRun {
  service: ServiceName;
  /** Seconds from spawn to `/readyz` 200, folding the whole log (no checkpoint yet). */
  foldSeconds: number;
  /** The same, restored from the checkpoint the first run wrote at its stop. */
  checkpointSeconds: number;
  /** Resident memory once ready, MiB (first run, second run). */
  rssMiB: [number, number];
}

export interface StartupBenchResult {
  events: number;
  instances: number;
  fillPerSecond: number;
  runs: StartupRun[];
}

const SERVICES: ServiceName[] = ['instances', 'sessions', 'webhooks'];
const silent = createLogger('bench', 'silent');

const rssMiB = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return line ? Number(line.replace(/\D+/g, '')) / 1024 : Number.NaN;
};

/** Polls `/readyz` until 200 (bounded: 120 s). */
const untilReady = async (port: number): Promise<void> => {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`not ready within 120 s (ops port ${port})`);
};

/** The service's durable consumers (if any) have nothing pending. */
const durablesDone = async (nats: NatsHandle, service: ServiceName): Promise<boolean> => {
  const names = service === 'webhooks' ? [DURABLES.webhooksRouter] : [];
  for (const name of names) {
    const info = await nats.jsm.consumers.info(STREAMS.events.name, name).catch(() => null);
    if (!info || info.num_pending > 0 || info.num_ack_pending > 0) return false;
  }
  return true;
};

/** Starts the service as a process, times spawn to `/readyz` 200, reads its RSS, waits for `settled`, stops it. */
const startOnce = async (service: ServiceName, natsUrl: string, settled?: () => Promise<boolean>): Promise<{ seconds: number; rss: number }> => {
  const opsPort = await freeFixedPort();
  const env: Record<string, string> = { NATS_URL: natsUrl, OPS_PORT: String(opsPort), OPS_HOST: '127.0.0.1', LOG_LEVEL: 'info', WA_CONNECTOR: 'sandbox' };
  for (const name of ['INSTANCES', 'SESSIONS', 'WEBHOOKS']) env[`${name}_GRPC_ADDRESS`] = '127.0.0.1:0';
  const started = performance.now();
  const child = await startServiceProcess({ service, env, startTimeoutMs: 120_000 });
  try {
    await untilReady(opsPort);
    const seconds = (performance.now() - started) / 1000;
    const rss = rssMiB(child.pid);
    for (let i = 0; settled && i < 600 && !(await settled()); i++) await new Promise((resolve) => setTimeout(resolve, 500));
    return { seconds, rss };
  } finally {
    await child.stop(); // writes the checkpoint
  }
};

/**
 * Service start-up with a long log: BENCH_STARTUP_EVENTS (default 1,000,000) events, of which 5 instance commits per
 * instance (BENCH_STARTUP_INSTANCES, default 10,000; one in ten stays linked, the others are logged out) and the rest
 * inbound messages. Each of instances, sessions and
 * webhooks runs as its own process: once to bring its durable consumers to the end of the log, then timed with no
 * checkpoint (it folds the whole log and writes one at its stop), then timed from that checkpoint.
 */
export const runStartupBench = async (): Promise<StartupBenchResult> => {
  const total = envPositiveInt('BENCH_STARTUP_EVENTS', 1_000_000);
  const instances = envPositiveInt('BENCH_STARTUP_INSTANCES', 10_000);
  const nats = await startBenchNats();
  try {
    const handle = await connectNats({ url: nats.url, name: 'bench-startup', logger: silent, timeoutMs: 30_000 });
    const store = await JetStreamEventStore.open(handle);
    const at = new Date().toISOString();
    const id = (i: number): string => `BS${String(i).padStart(18, '0')}`;
    const instanceCommits: NewEvent[][] = [
      [instanceEvent('InstanceConnecting', at, {}), instanceEvent('InstanceQrIssued', at, {})],
      [instanceEvent('InstanceLinked', at, { number: '4915112345678' }), instanceEvent('InstanceConnected', at, {})],
      [instanceEvent('InstanceDisconnected', at, { reason: 'connection_lost', reconnecting: true })],
    ];
    const messageEvents = total - instances * 7;
    log(`startup: filling ${total.toLocaleString('en-US')} events (${instances.toLocaleString('en-US')} instances)...`);
    const fill = await timed(async () => {
      await pool(instances, 256, async (i) => {
        await store.append(instanceStream(id(i)), [instanceEvent('InstanceCreated', at, { instance_id: id(i), account: `a${i % 50}` })], {
          expectedVersion: 'any',
          commandId: `c-${i}`,
        });
        for (const [n, events] of instanceCommits.entries())
          await store.append(instanceStream(id(i)), events, { expectedVersion: 'any', commandId: `c-${i}-${n}` });
        // One in ten stays linked (the sessions service reconnects those at start); the others were logged out.
        if (i % 10 !== 0) {
          await store.append(instanceStream(id(i)), [instanceEvent('InstanceLoggedOut', at, { reason: 'logged_out_on_phone' })], {
            expectedVersion: 'any',
            commandId: `c-${i}-out`,
          });
        }
      });
      await pool(messageEvents, 512, async (m) => {
        const event: NewEvent = {
          type: 'MessageAccepted',
          schemaVersion: 1,
          occurredAt: at,
          data: { to: '4915199999999', type: 'text', text: `message ${m}` },
        };
        await store.append(`${id(m % instances)}.message.m${m}`, [event], { expectedVersion: 'any', commandId: `m-${m}` });
      });
    });
    log(`startup: filled in ${fill.seconds.toFixed(1)} s`);
    const checkpoints = await CheckpointStore.open(handle);
    const runs: StartupRun[] = [];
    for (const service of SERVICES) {
      // A restart of a running system: its durable consumers are at the end of the log, so only the read model's
      // start is measured. A first run takes them there.
      await startOnce(service, nats.url, () => durablesDone(handle, service));
      await checkpoints.remove(INSTANCE_STATES_MODEL);
      const fold = await startOnce(service, nats.url);
      const restored = await startOnce(service, nats.url);
      runs.push({ service, foldSeconds: fold.seconds, checkpointSeconds: restored.seconds, rssMiB: [fold.rss, restored.rss] });
      log(`startup: ${service}: ${fold.seconds.toFixed(2)} s folding, ${restored.seconds.toFixed(2)} s from the checkpoint`);
    }
    await handle.close();
    return { events: total, instances, fillPerSecond: total / fill.seconds, runs };
  } finally {
    await nats.stop();
  }
};
