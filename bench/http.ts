import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '@wagw/lib';
import {
  BENCH_RATE_LIMIT,
  childrenOf,
  envPositiveInt,
  fmtInt,
  log,
  natsCpuSeconds,
  processInfo,
  servicesCpuSeconds,
  startBenchNats,
  stopProcess,
  type BenchNats,
} from './common';

const ROOT = resolve(__dirname, '..');

export interface HttpResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** The statuses other than 2xx and how often each came (e.g. { 503: 12 }), to tell a shed load from a failure. */
  otherStatuses: Record<string, number>;
  /** Responses received. */
  total: number;
}

/** One result as a table cell; statuses other than 2xx are named when there were any. */
export const fmtHttp = (r: HttpResult): string => {
  const statuses = Object.entries(r.otherStatuses).map(([status, count]) => `${count} × ${status}`);
  return `${fmtInt(r.requestsPerSecond)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms (${r.non2xx} non-2xx${statuses.length ? `: ${statuses.join(', ')}` : ''}, ${r.errors} errors)`;
};

/** 50 connections for BENCH_DURATION seconds (default 10). */
const cannon = async (options: autocannon.Options): Promise<HttpResult> => {
  const result = await autocannon({ connections: 50, duration: envPositiveInt('BENCH_DURATION', 10), ...options });
  const otherStatuses: Record<string, number> = {};
  for (const [status, { count = 0 }] of Object.entries(result.statusCodeStats ?? {})) if (!status.startsWith('2') && count > 0) otherStatuses[status] = count;
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    otherStatuses,
    total: result.requests.total,
  };
};

/** Waits for a child's stdout to match `pattern` (bounded). */
const waitForOutput = (child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> =>
  new Promise((resolvePromise, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ${String(pattern)} within ${timeoutMs} ms`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        resolvePromise(match);
      }
    });
  });

/** CPU time per request, µs, by process: the gateway's services (by name) or the bare server, nats-server, this process (autocannon). */
export type CpuPerRequest = Record<string, number>;

export interface HttpBenchResult {
  bareGet: HttpResult;
  createInstance: HttpResult;
  barePost: HttpResult;
  /** Bare Fastify POST that appends one JetStream message and answers after the ack: the durable floor (median round). */
  floor: HttpResult;
  /** POST /v1/send (median round); floor and send run in `rounds` alternating rounds, so drift hits both alike. */
  send: HttpResult;
  rounds: number;
  floorCpu: CpuPerRequest;
  sendCpu: CpuPerRequest;
  /** The limiter A/B: send on fresh gateways (each on a fresh nats-server) with and without the rate limiter, medians. */
  sendLimited: HttpResult;
  sendNoLimiter: HttpResult;
  limiterRounds: number;
}

export interface Gateway {
  base: string;
  headers: Record<string, string>;
  /** CPU seconds so far of the launcher's services (gateway, instances, sessions, webhooks) together. */
  cpuSeconds: () => number;
  /** CPU seconds so far of each of the launcher's services, by name. */
  cpuByService: () => Record<string, number>;
}

/**
 * The gateway as the quickstart runs it (the launcher: every service its own process) for the time of `fn`: on a
 * nats-server the launcher starts itself (`nats` null), or on the benchmark's `nats` (one server or a cluster);
 * `env` adds settings for the services.
 */
export const withGateway = async <T>(nats: BenchNats | null, fn: (gateway: Gateway) => Promise<T>, env: Record<string, string> = {}): Promise<T> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wagw-bench-http-'));
  const port = await freePort();
  // With NATS_URL set the launcher starts no nats-server and hands NATS_URL and NATS_REPLICAS to every service.
  const natsEnv = nats ? { NATS_URL: nats.url, NATS_REPLICAS: String(nats.replicas) } : { NATS_URL: '', NATS_CLUSTER_SIZE: '', NATS_REPLICAS: '' };
  const gateway = spawn(process.execPath, [join(ROOT, 'lib/dist/launcher/main.js')], {
    env: {
      ...process.env,
      // Counted but never refused, unless `env` says otherwise (limits 0: no limiter).
      ...BENCH_RATE_LIMIT,
      ...env,
      ...natsEnv,
      DATA_DIR: dataDir,
      // create_instance is measured by the thousand: no per-account instance quota.
      INSTANCE_QUOTA: '0',
      // Sends are measured by the ten thousand on one instance (the sandbox sends 1 a second): no queue limit.
      SEND_QUEUE_MAX: '0',
      PORT: String(port),
      LOG_LEVEL: 'error',
      AUTH_JWT_SECRET: '',
      WA_CONNECTOR: 'sandbox',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const token = (await waitForOutput(gateway, /export TOKEN=(\S+)/, 60_000))[1]!;
    const cpuSeconds = (): number => childrenOf(gateway.pid!).reduce((sum, p) => sum + p.cpuSeconds, 0);
    const cpuByService = (): Record<string, number> => servicesCpuSeconds(gateway.pid!);
    return await fn({ base: `http://127.0.0.1:${port}/v1`, headers: { authorization: `Bearer ${token}` }, cpuSeconds, cpuByService });
  } finally {
    await stopProcess(gateway);
    rmSync(dataDir, { recursive: true, force: true });
  }
};

/** Creates a sandbox instance and links it; fails unless it is connected within 10 s. */
const linkInstance = async ({ base, headers }: Gateway): Promise<string> => {
  const instanceId = ((await (await fetch(`${base}/create_instance`, { headers })).json()) as { instance_id: string }).instance_id;
  await fetch(`${base}/get_qrcode?instance_id=${instanceId}`, { headers });
  await fetch(`${base}/sandbox/scan?instance_id=${instanceId}&number=4915112345678`, { headers });
  for (let i = 0; i < 100; i++) {
    const status = (await (await fetch(`${base}/status?instance_id=${instanceId}`, { headers })).json()) as { state: string };
    if (status.state === 'connected') return instanceId;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`instance ${instanceId} not connected 10 s after scanning`);
};

const sendBody = (instanceId: string): string =>
  JSON.stringify({ instance_id: instanceId, number: '4915199999999', type: 'text', message: 'hello from the gateway benchmark, a short message body' });

/** POST /v1/send, 50 connections: acceptance = validation + gRPC + durable append. */
const cannonSend = (gateway: Gateway, instanceId: string, duration?: number): Promise<HttpResult> =>
  cannon({
    url: `${gateway.base}/send`,
    method: 'POST',
    headers: { ...gateway.headers, 'content-type': 'application/json' },
    body: sendBody(instanceId),
    ...(duration ? { duration } : {}),
  });

const cannonPost = (url: string, instanceId: string, duration?: number): Promise<HttpResult> =>
  cannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body: sendBody(instanceId), ...(duration ? { duration } : {}) });

/** POST /v1/send on a gateway of its own, on a fresh nats-server, with or without the rate limiter (limits 0). */
const sendOnFreshGateway = async (limiter: boolean): Promise<HttpResult> => {
  const fresh = await startBenchNats();
  return withGateway(
    fresh,
    async (gateway) => {
      const instanceId = await linkInstance(gateway);
      await cannonSend(gateway, instanceId, 2);
      log(`http: POST /v1/send, ${limiter ? 'with' : 'without'} the rate limiter`);
      return cannonSend(gateway, instanceId);
    },
    limiter ? {} : { RATE_LIMIT_ACCOUNT_MAX: '0', RATE_LIMIT_ANONYMOUS_MAX: '0' },
  ).finally(() => fresh.stop());
};

const medianOf = (runs: HttpResult[]): HttpResult => [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor(runs.length / 2)]!;

interface Measured {
  result: HttpResult;
  cpu: CpuPerRequest;
}

/** `run`'s result with the CPU µs per response it cost each process of `processes`, nats-server and this process. */
const withCpu = async (nats: BenchNats, processes: () => Record<string, number>, run: () => Promise<HttpResult>): Promise<Measured> => {
  const before = { processes: processes(), nats: natsCpuSeconds(nats), self: process.cpuUsage() };
  const result = await run();
  const after = processes();
  const self = process.cpuUsage(before.self);
  const perRequest = (seconds: number): number => (seconds / Math.max(1, result.total)) * 1e6;
  const cpu: CpuPerRequest = {};
  for (const [name, seconds] of Object.entries(after)) cpu[name] = perRequest(seconds - (before.processes[name] ?? 0));
  cpu['nats-server'] = perRequest(natsCpuSeconds(nats) - before.nats);
  cpu['autocannon (the benchmark)'] = perRequest((self.user + self.system) / 1e6);
  return { result, cpu };
};

/** "gateway 38 µs, sessions 55 µs, ..., total 148 µs". */
export const fmtCpu = (cpu: CpuPerRequest): string => {
  const parts = Object.entries(cpu).filter(([, micros]) => micros >= 0.5);
  const total = parts.reduce((sum, [, micros]) => sum + micros, 0);
  return `${parts.map(([name, micros]) => `${name} ${micros.toFixed(0)}`).join(', ')}; total ${total.toFixed(0)} µs`;
};

/**
 * The gateway on the benchmark's nats-server, beside bare Fastify in its own process on the same nats-server: GET /
 * and the JetStream floor (a POST that appends one message and answers after its ack) against create_instance, a
 * schema-validated POST and the floor against POST /v1/send (on a linked sandbox instance); then the rate limiter's
 * cost, from BENCH_LIMITER_ROUNDS (3) rounds of send on fresh gateways with and without it.
 */
export const runHttpBench = async (): Promise<HttpBenchResult> => {
  const nats = await startBenchNats();
  const bare = spawn(process.execPath, ['-r', join(ROOT, 'bench/register.js'), join(ROOT, 'bench/bareServer.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_NATS_URL: nats.url },
  });
  try {
    const barePort = (await waitForOutput(bare, /^(\d+)\n/, 20_000))[1]!;
    const bareUrl = `http://127.0.0.1:${barePort}`;
    // send before create_instance: the instances it creates would otherwise still be consumed (by every service)
    // while send is measured.
    const rounds = envPositiveInt('BENCH_HTTP_ROUNDS', 3);
    const measured = await withGateway(nats, async (gateway) => {
      await cannon({ url: `${bareUrl}/`, duration: 2 });
      await cannonPost(`${bareUrl}/append`, 'warm-up', 2);
      log('http: bare Fastify GET /');
      const bareGet = await cannon({ url: `${bareUrl}/` });
      const instanceId = await linkInstance(gateway);
      log('http: bare Fastify POST /send (schema)');
      const barePost = await cannonPost(`${bareUrl}/send`, instanceId);
      await cannonSend(gateway, instanceId, 2);
      const bareCpu = (): Record<string, number> => ({ 'bare Fastify': processInfo(bare.pid!)?.cpuSeconds ?? 0 });
      const floors: Measured[] = [];
      const sends: Measured[] = [];
      for (let round = 0; round < rounds; round++) {
        log(`http: round ${round + 1} of ${rounds}: bare Fastify POST /append (one JetStream append per request), then POST /v1/send`);
        floors.push(await withCpu(nats, bareCpu, () => cannonPost(`${bareUrl}/append`, 'floor')));
        sends.push(await withCpu(nats, gateway.cpuByService, () => cannonSend(gateway, instanceId)));
      }
      log('http: GET /v1/create_instance');
      const createInstance = await cannon({ url: `${gateway.base}/create_instance`, headers: gateway.headers });
      const floor = medianOf(floors.map((m) => m.result));
      const send = medianOf(sends.map((m) => m.result));
      return {
        bareGet,
        floor,
        createInstance,
        barePost,
        send,
        rounds,
        floorCpu: floors[floors.findIndex((m) => m.result === floor)]!.cpu,
        sendCpu: sends[sends.findIndex((m) => m.result === send)]!.cpu,
      };
    });
    // The limiter's cost is a few per cent, less than the machine's drift between two runs: both sides run alike (a
    // fresh nats-server and gateway each), in alternating order, and the medians are compared.
    const limiterRounds = envPositiveInt('BENCH_LIMITER_ROUNDS', 3);
    const limited: HttpResult[] = [];
    const unlimited: HttpResult[] = [];
    for (let round = 0; round < limiterRounds; round++) {
      for (const on of round % 2 === 0 ? [true, false] : [false, true]) {
        (on ? limited : unlimited).push(await sendOnFreshGateway(on));
      }
    }
    return { ...measured, sendLimited: medianOf(limited), sendNoLimiter: medianOf(unlimited), limiterRounds };
  } finally {
    await stopProcess(bare);
    await nats.stop();
  }
};

export interface SendResult extends HttpResult {
  /** CPU time per accepted send, µs: the services together, and every nats-server together. */
  servicesMicrosPerRequest: number;
  natsMicrosPerRequest: number;
}

/**
 * POST /v1/send acceptance alone, the same load as runHttpBench's, on `nats` (R1 or a cluster's R3): what a durable
 * append costs with replication. A 2 s warm-up first, so that neither side is measured with a cold JIT or while the
 * streams' leaders settle. The CPU per request is steadier than the rate when the machine's speed drifts.
 */
export const runSendBench = (nats: BenchNats): Promise<SendResult> =>
  withGateway(nats, async (gateway) => {
    const instanceId = await linkInstance(gateway);
    await cannonSend(gateway, instanceId, 2);
    log(`http: POST /v1/send on ${nats.label} (${nats.url})`);
    const before = { services: gateway.cpuSeconds(), nats: natsCpuSeconds(nats) };
    const result = await cannonSend(gateway, instanceId);
    const perRequest = (seconds: number): number => (seconds / Math.max(1, result.total)) * 1e6;
    return {
      ...result,
      servicesMicrosPerRequest: perRequest(gateway.cpuSeconds() - before.services),
      natsMicrosPerRequest: perRequest(natsCpuSeconds(nats) - before.nats),
    };
  });
