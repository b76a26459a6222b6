import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { connectNats, createLogger, natsServerBinary, natsServerVersion, startLocalNatsCluster, startLocalNatsServer } from '@wagw/lib';

/**
 * The benchmark's own NATS: one nats-server (R1), or with `nodes: 3` a local 3-node JetStream cluster on which every
 * stream and bucket gets 3 replicas (R3), as `NATS_URL=a,b,c NATS_REPLICAS=3` runs it; free loopback ports and a
 * temporary store, deleted on stop.
 */
export interface BenchNats {
  /** `NATS_URL`: one server, or every node's, comma-separated. */
  readonly url: string;
  /** `NATS_REPLICAS` for the clients and services on it. */
  readonly replicas: number;
  /** "R1" or "R3", for the logs. */
  readonly label: string;
  /** Every nats-server's pid (for their CPU time). */
  readonly pids: readonly number[];
  stop(): Promise<void>;
}

export const startBenchNats = async ({ nodes = 1 }: { nodes?: number } = {}): Promise<BenchNats> => {
  const storeDir = mkdtempSync(join(tmpdir(), 'wagw-bench-nats-'));
  try {
    if (nodes <= 1) {
      const server = await startLocalNatsServer({ storeDir, host: '127.0.0.1' });
      return {
        url: server.url,
        replicas: 1,
        label: 'R1',
        pids: [server.pid],
        stop: async () => {
          await server.stop();
          rmSync(storeDir, { recursive: true, force: true });
        },
      };
    }
    const cluster = await startLocalNatsCluster({ size: nodes, baseDir: storeDir, host: '127.0.0.1' });
    // Three copies, as the launcher keeps on a cluster of any size (min(nodes, 3)).
    const replicas = Math.min(nodes, 3);
    return {
      url: cluster.url,
      replicas,
      label: `R${replicas}`,
      pids: cluster.nodes.map((node) => node.pid ?? 0),
      stop: async () => {
        await cluster.stop();
        rmSync(storeDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(storeDir, { recursive: true, force: true });
    throw error;
  }
};

/**
 * Fails unless every stream on `server` (the event streams and the KV buckets' streams the services created) has the
 * server's replicas: an R3 row must not be measured on R1 streams. Returns "N streams, all R3" for the log.
 */
export const assertReplicated = async (server: BenchNats): Promise<string> => {
  const nats = await connectNats({
    url: server.url,
    name: 'bench-replicas',
    logger: createLogger('bench', 'silent'),
    timeoutMs: 30_000,
    replicas: server.replicas,
  });
  try {
    // One page (up to 256 streams) is all there is: the services create a handful.
    const streams = await nats.jsm.streams.list().next();
    const wrong = streams.filter((info) => info.config.num_replicas !== server.replicas).map((info) => `${info.config.name}: R${info.config.num_replicas}`);
    if (streams.length === 0 || wrong.length > 0)
      throw new Error(`expected every stream R${server.replicas} on ${server.url}, got ${wrong.join(', ') || 'no streams'}`);
    return `${streams.length} streams, all R${server.replicas}`;
  } finally {
    await nats.close();
  }
};

/** CPU seconds so far of every nats-server of `nats` (a stopped one counts 0). */
export const natsCpuSeconds = (nats: BenchNats): number => nats.pids.reduce((sum, pid) => sum + (processInfo(pid)?.cpuSeconds ?? 0), 0);

/** Runs `fn` and returns its result with the elapsed wall time in seconds. */
export const timed = async <T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number }> => {
  const start = performance.now();
  const value = await fn();
  return { value, seconds: (performance.now() - start) / 1000 };
};

/**
 * Runs `count` tasks with at most `concurrency` in flight (a sliding window, not batches): each of the
 * `concurrency` workers takes the next index until all are taken. The first failure stops every worker.
 */
export const pool = async (count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> => {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < count) {
      const index = next++;
      try {
        await task(index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
};

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The benchmarks' gateways count every request (the limiter's cost is in the numbers) but never refuse one. */
export const BENCH_RATE_LIMIT = { RATE_LIMIT_ACCOUNT_MAX: String(Number.MAX_SAFE_INTEGER), RATE_LIMIT_ANONYMOUS_MAX: String(Number.MAX_SAFE_INTEGER) } as const;

export const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
export const fmtRatio = (n: number): string => n.toFixed(2);

/** A positive integer from the environment, or the default. */
export const envPositiveInt = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer (got "${raw}")`);
  return value;
};

export const log = (message: string): void => {
  process.stderr.write(`[bench] ${message}\n`);
};

/** The machine and versions the numbers were measured on, for the results header. */
export const environment = (): string => {
  // The binary the benchmarks start (the pinned .tools/nats-server when built), not whichever is first on the PATH.
  const nats = `nats-server v${natsServerVersion(natsServerBinary()) ?? 'unknown'}`;
  const cpu = cpus();
  return `${new Date().toISOString()} · Node ${process.version} · ${nats} · ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}`;
};

/** One row of the results table. */
export interface ResultRow {
  benchmark: string;
  result: string;
  reference: string;
  ratio: string;
  target: string;
  /** Whether a performance target was met (null: no target). */
  met: boolean | null;
}

export const markdownTable = (rows: ResultRow[]): string => {
  const escape = (s: string): string => s.replace(/\|/g, '\\|');
  const lines = [
    '| Benchmark | Result | Same-run reference | Ratio | Target |',
    '|---|---|---|---|---|',
    ...rows.map((r) => {
      const target = r.met === null ? r.target : `${r.target} ${r.met ? '(met)' : '(**missed**)'}`;
      return `| ${[r.benchmark, r.result, r.reference, r.ratio, target].map(escape).join(' | ')} |`;
    }),
  ];
  return lines.join('\n');
};

export interface ProcessInfo {
  pid: number;
  ppid: number;
  comm: string;
  argv: string[];
  /** User + system CPU time, seconds. */
  cpuSeconds: number;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const TICKS = 100;

/** What /proc tells of a process, or null when it is gone. */
export const processInfo = (pid: number): ProcessInfo | null => {
  try {
    // The fields after the command name (which may hold spaces) start after the last ')': state, ppid, ...
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      pid,
      ppid: Number(fields[1]),
      comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'),
      cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS,
    };
  } catch {
    return null;
  }
};

/** The processes whose parent is `ppid`. */
export const childrenOf = (ppid: number): ProcessInfo[] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => processInfo(Number(entry)))
    .filter((p): p is ProcessInfo => p?.ppid === ppid);

/** The service a launched process runs (`services/<name>/dist/main.js`), or undefined. */
const serviceNameOf = (p: ProcessInfo): string | undefined =>
  /services\/([^/]+)\/dist\/main\.js$/.exec(p.argv.find((arg) => arg.endsWith('main.js')) ?? '')?.[1];

/** The pid of the service `name` the launcher `launcherPid` runs. */
export const servicePid = (launcherPid: number, name: string): number => {
  const found = childrenOf(launcherPid).find((p) => serviceNameOf(p) === name);
  if (!found) throw new Error(`no ${name} service process under launcher ${launcherPid}`);
  return found.pid;
};

/** CPU seconds so far of each service the launcher `launcherPid` runs, by name. */
export const servicesCpuSeconds = (launcherPid: number): Record<string, number> => {
  const cpu: Record<string, number> = {};
  for (const p of childrenOf(launcherPid)) {
    const name = serviceNameOf(p);
    if (name) cpu[name] = p.cpuSeconds;
  }
  return cpu;
};

/** The gateway process a launcher started by this process (`withGateway`) runs, by /proc. */
export const launchedGatewayPid = (): number => {
  const launcher = childrenOf(process.pid).find((p) => p.argv.some((a) => a.endsWith('launcher/main.js')));
  if (!launcher) throw new Error('no launcher started by this process');
  return servicePid(launcher.pid, 'gateway');
};

/** Resident memory of a process, bytes. */
export const rssBytes = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

/**
 * SIGTERM, then SIGKILL after 30 s (a launcher stops its services first, each within 10 s); resolves once the
 * process has exited.
 */
export const stopProcess = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
};
