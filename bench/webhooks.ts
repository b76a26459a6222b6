import { createServer, type Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { connectNats, createLogger, instanceEvent, instanceStream, JetStreamEventStore, KvWebhookSecretStore, type NatsHandle } from '@wagw/lib';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { assertReplicated, envPositiveInt, log, natsCpuSeconds, pool, processInfo, startBenchNats, type BenchNats } from './common';

const silent = createLogger('bench', 'silent');
const INSTANCES = 100;

/** A receiver on 127.0.0.1 that answers 200 at once and records each event's end-to-end latency. */
interface Receiver {
  url: string;
  latencies: number[];
  count: () => number;
  firstAt: () => number;
  lastAt: () => number;
  /** Forgets what was received so far (between phases of a benchmark). */
  reset: () => void;
  close: () => Promise<void>;
}

const startReceiver = async (): Promise<Receiver> => {
  const latencies: number[] = [];
  let first = 0;
  let last = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      if (!first) first = performance.now();
      last = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
      latencies.push(now - Date.parse(body.timestamp));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    latencies,
    count: () => latencies.length,
    firstAt: () => first,
    lastAt: () => last,
    reset: () => {
      latencies.length = 0;
      first = 0;
      last = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

const waitUntil = async (check: () => boolean, timeoutMs: number): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return check();
};

/** Instances whose webhook points at the receiver (as set_webhook leaves them), and their signing secrets. */
const setUpInstances = async (nats: NatsHandle, store: JetStreamEventStore, url: string, tag: string): Promise<string[]> => {
  const secrets = await KvWebhookSecretStore.open(nats);
  const ids = Array.from({ length: INSTANCES }, (_, i) => `${tag}${String(i).padStart(6, '0')}`.slice(-20).padStart(20, 'A'));
  const now = new Date().toISOString();
  await pool(ids.length, 20, async (i) => {
    const id = ids[i]!;
    await store.append(
      instanceStream(id),
      [
        instanceEvent('InstanceCreated', now, { instance_id: id, account: 'bench' }),
        instanceEvent('WebhookConfigured', now, { url: `${url}/${id}`, enabled: true }),
      ],
      {
        expectedVersion: 0,
        commandId: `setup-${id}`,
      },
    );
    await secrets.getOrCreate(id);
  });
  return ids;
};

/** Appends what the sessions service appends for an inbound message. */
const appendMessage = (store: JetStreamEventStore, instanceId: string, n: number): Promise<unknown> =>
  store.append(
    `${instanceId}.message.M${n}`,
    [{ type: 'MessageReceived', schemaVersion: 1, occurredAt: new Date().toISOString(), data: { from: '4915112345678', text: `hello ${n}` } }],
    {
      expectedVersion: 0,
      commandId: `msg-${instanceId}-${n}`,
    },
  );

/** `natsNodes` 1: one nats-server (R1); 3: a local 3-node cluster with every stream and bucket R3. */
const withStack = async <T>(natsNodes: number, fn: (nats: NatsHandle, store: JetStreamEventStore, server: BenchNats) => Promise<T>): Promise<T> => {
  const server = await startBenchNats({ nodes: natsNodes });
  // The event stream and the secrets bucket are created here, before the service starts: with the server's replicas.
  const nats = await connectNats({ url: server.url, name: 'bench-webhooks', logger: silent, timeoutMs: 30_000, replicas: server.replicas });
  try {
    const value = await fn(nats, await JetStreamEventStore.open(nats), server);
    log(`webhooks: ${await assertReplicated(server)}`);
    return value;
  } finally {
    await nats.close();
    await server.stop();
  }
};

/** The webhooks service as its own process (built by `npm run bench`), as it runs in production. */
const startWebhooks = async (server: BenchNats): Promise<{ cpuSeconds: () => number; close: () => Promise<void> }> => {
  const child: ChildProcess = spawn(
    process.execPath,
    [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []), resolve(__dirname, '../services/webhooks/dist/main.js')],
    {
      env: {
        ...process.env,
        NATS_URL: server.url,
        NATS_REPLICAS: String(server.replicas),
        WEBHOOKS_GRPC_ADDRESS: '127.0.0.1:0',
        OPS_PORT: '0',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  await new Promise((r) => setTimeout(r, 1_000));
  return {
    cpuSeconds: () => (child.pid === undefined ? 0 : (processInfo(child.pid)?.cpuSeconds ?? 0)),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
};

export interface WebhookLatencyResult {
  rate: number;
  seconds: number;
  delivered: number;
  p50: number;
  p99: number;
}

/** Event-to-delivery latency at a steady event rate (default 1,000 events/s for 10 s). */
export const benchWebhookLatency = async (): Promise<WebhookLatencyResult> => {
  const rate = envPositiveInt('BENCH_WEBHOOK_RATE', 1_000);
  const seconds = envPositiveInt('BENCH_DURATION', 10);
  const receiver = await startReceiver();
  try {
    return await withStack(1, async (nats, store, server) => {
      const ids = await setUpInstances(nats, store, receiver.url, 'L');
      const webhooks = await startWebhooks(server);
      try {
        const total = rate * seconds;
        log(`webhooks: ${total} events at ${rate}/s over ${INSTANCES} instances`);
        const started = performance.now();
        const inflight: Promise<unknown>[] = [];
        for (let n = 0; n < total; n++) {
          const due = started + (n * 1000) / rate;
          const wait = due - performance.now();
          if (wait > 1) await new Promise((r) => setTimeout(r, wait));
          inflight.push(appendMessage(store, ids[n % ids.length]!, n));
          if (inflight.length >= 500) await Promise.all(inflight.splice(0));
        }
        await Promise.all(inflight);
        await waitUntil(() => receiver.count() >= total, 60_000);
        const warm = receiver.latencies.slice(Math.floor(receiver.latencies.length * 0.1));
        return { rate, seconds, delivered: receiver.count(), p50: percentile(warm, 50), p99: percentile(warm, 99) };
      } finally {
        await webhooks.close();
      }
    });
  } finally {
    await receiver.close();
  }
};

export interface WebhookThroughputResult {
  replicas: number;
  /** The NATS it ran on: "R1" (one server) or "R3" (a 3-node cluster). */
  nats: string;
  events: number;
  deliveriesPerSecond: number;
  /** CPU time of the webhooks processes per delivery, in microseconds (steadier than the rate on a shared machine). */
  cpuMicrosPerDelivery: number;
  /** The nats-servers' (all nodes of a cluster together) and the receiver's (this process's) CPU time per delivery, µs. */
  natsMicrosPerDelivery: number;
  receiverMicrosPerDelivery: number;
  rawPostsPerSecond: number;
  ratio: number;
}

/**
 * The most deliveries/s: a backlog of events is queued, then the webhooks service delivers it all. Beside it, the
 * same receiver's capacity for plain keep-alive POSTs (undici, same concurrency, no NATS, no signing). `replicas`
 * webhooks processes, on one nats-server (`natsNodes` 1) or a local 3-node R3 cluster (3).
 */
export const benchWebhookThroughput = async (replicas: number, natsNodes = 1): Promise<WebhookThroughputResult> => {
  const events = envPositiveInt('BENCH_WEBHOOK_EVENTS', 20_000);
  const receiver = await startReceiver();
  try {
    const agent = new Agent({ connections: 64 });
    const rawStart = performance.now();
    await pool(events, 256, async (i) => {
      const res = await request(`${receiver.url}/raw`, { method: 'POST', body: JSON.stringify({ timestamp: new Date().toISOString(), i }), dispatcher: agent });
      await res.body.dump();
    });
    const rawPostsPerSecond = events / ((performance.now() - rawStart) / 1000);
    await agent.close();
    receiver.reset();

    const measured = await withStack(natsNodes, async (nats, store, server) => {
      const ids = await setUpInstances(nats, store, receiver.url, 'T');
      log(`webhooks: queueing ${events} events on ${server.label}`);
      await pool(events, 100, (n) => appendMessage(store, ids[n % ids.length]!, n).then(() => undefined));
      const started = await Promise.all(Array.from({ length: replicas }, () => startWebhooks(server)));
      const webhooks = {
        cpuSeconds: () => started.reduce((sum, replica) => sum + replica.cpuSeconds(), 0),
        close: () => Promise.all(started.map((replica) => replica.close())),
      };
      try {
        const natsCpu = (): number => natsCpuSeconds(server);
        const ownCpu = (): number => {
          const usage = process.cpuUsage();
          return (usage.user + usage.system) / 1e6;
        };
        // Sustained rate: from the first delivery (the process has started and caught up) to the last.
        if (!(await waitUntil(() => receiver.count() > 0, 30_000))) throw new Error('no delivery within 30 s');
        const atStart = { count: receiver.count(), at: receiver.firstAt(), webhooks: webhooks.cpuSeconds(), nats: natsCpu(), own: ownCpu() };
        if (!(await waitUntil(() => receiver.count() >= events, 120_000))) throw new Error(`only ${receiver.count()} of ${events} delivered`);
        const measuredEvents = events - atStart.count;
        const perDelivery = (seconds: number): number => (seconds / measuredEvents) * 1e6;
        return {
          nats: server.label,
          deliveriesPerSecond: (events - 1) / ((receiver.lastAt() - atStart.at) / 1000),
          cpuMicrosPerDelivery: perDelivery(webhooks.cpuSeconds() - atStart.webhooks),
          natsMicrosPerDelivery: perDelivery(natsCpu() - atStart.nats),
          receiverMicrosPerDelivery: perDelivery(ownCpu() - atStart.own),
        };
      } finally {
        await webhooks.close();
      }
    });
    return { replicas, events, ...measured, rawPostsPerSecond, ratio: measured.deliveriesPerSecond / rawPostsPerSecond };
  } finally {
    await receiver.close();
  }
};
