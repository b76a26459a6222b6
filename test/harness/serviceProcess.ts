import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

export type ServiceName = 'gateway' | 'instances' | 'sessions' | 'webhooks';

/** The log line each service writes once it serves (services/<name>/src/service.ts). */
const STARTED: Record<ServiceName, string> = {
  gateway: 'gateway listening',
  instances: 'instances service started',
  sessions: 'sessions service started',
  webhooks: 'webhooks service started',
};

export interface ServiceProcessOptions {
  service: ServiceName;
  /** Added to this process's environment (the caller sets NATS_URL, listen addresses, ...). */
  env: Record<string, string>;
  /** How long to wait for the start log line (a cluster electing its leaders delays it). Default 30 s. */
  startTimeoutMs?: number;
  /** Prefixes every output line and writes it here (e.g. a file, to read after a failed run). Default: kept in memory only. */
  log?: NodeJS.WritableStream;
  /** A name for error messages and log prefixes (e.g. the replica id). Default: the service name. */
  label?: string;
}

/**
 * A service's built entry point (`services/<name>/dist/main.js`, built by `npm test`) run as a process of its own,
 * as in production. `crash()` is SIGKILL (no shutdown hook runs: leases stay held, work stays unacked);
 * `stop()` is SIGTERM and waits for the exit; `restart()` starts it again with the same environment (so the same
 * ports and replica id) and waits for its start line.
 */
export interface ServiceProcess {
  readonly service: ServiceName;
  readonly label: string;
  readonly running: boolean;
  readonly pid: number;
  /** The last 20,000 characters of its output (stdout and stderr), for failure messages. */
  output(): string;
  crash(): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

/** Every child still running; SIGKILLed when the test process exits, so none outlives a failed or force-exited run. */
const children = new Set<ChildProcess>();
let exitHook = false;
const track = (child: ChildProcess): void => {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => children.forEach((c) => c.kill('SIGKILL')));
};

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));

export const startServiceProcess = async (options: ServiceProcessOptions): Promise<ServiceProcess> => {
  const label = options.label ?? options.service;
  const main = join(ROOT, `services/${options.service}/dist/main.js`);
  let child: ChildProcess | null = null;
  let output = '';

  const launch = async (): Promise<void> => {
    // Only this run's output counts (a restart must not match the previous run's start line).
    let thisRun = '';
    const spawned = spawn(process.execPath, [main], { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child = spawned;
    track(spawned);
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString();
      output = (output + text).slice(-20_000);
      thisRun = (thisRun + text).slice(-20_000);
      options.log?.write(text.replace(/^(?=.)/gm, `[${label}] `));
    };
    spawned.stdout?.on('data', onData);
    spawned.stderr?.on('data', onData);
    const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
    while (!thisRun.includes(STARTED[options.service])) {
      if (spawned.exitCode !== null || spawned.signalCode !== null || Date.now() > deadline) {
        spawned.kill('SIGKILL');
        await exited(spawned);
        throw new Error(`${label} did not start (exit ${String(spawned.exitCode ?? spawned.signalCode)}):\n${output.slice(-4_000)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    current.kill(signal);
    await exited(current);
  };

  await launch();
  return {
    service: options.service,
    label,
    get running() {
      return child !== null && child.exitCode === null && child.signalCode === null;
    },
    get pid() {
      return child?.pid ?? 0;
    },
    output: () => output,
    crash: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
    restart: async () => {
      await end('SIGTERM');
      await launch();
    },
  };
};
