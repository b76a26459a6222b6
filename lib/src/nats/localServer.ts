import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createServer, connect as tcpConnect } from 'node:net';
import { freeFixedPort } from './ports';
import { argvOf, isAlive } from '../ops/processes';

/** A nats-server process this product started (tests, benchmarks, the quickstart). */
export interface LocalNatsServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly storeDir: string;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  stop(): Promise<void>;
  /** SIGKILLs the server (a crash) and waits for it to exit. */
  kill(): Promise<void>;
}

export interface LocalNatsOptions {
  storeDir: string;
  /** 0 or absent: a free port. */
  port?: number;
  host?: string;
  /** Default: `natsServerBinary()`. */
  binary?: string;
  /** Pipes the server's log to this stream (default: discarded). */
  log?: NodeJS.WritableStream;
  /** More command-line arguments (a cluster node's name, cluster listen address and routes). */
  extraArgs?: readonly string[];
  /**
   * Called when the server exits after it started, other than by `stop()` or `kill()` (a crash, an OOM kill, someone's
   * `kill`): a supervisor restarts it. An exit during start-up rejects the start instead.
   */
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
  /**
   * In a process group of its own, so a Ctrl-C in the terminal (SIGINT to the foreground group) does not stop it
   * behind its parent's back: the quickstart launcher stops it itself, after the services that use it.
   */
  detached?: boolean;
  /**
   * Ends the server (SIGTERM) when this process dies, even by SIGKILL, where a `process.on('exit')` hook never runs:
   * the quickstart launcher's nats-server must not outlive it holding the port and DATA_DIR's store. Linux only
   * (`setpriv --pdeathsig`, util-linux); elsewhere the next start on the store stops the orphan (`stopStaleServer`).
   * Only for servers started from the main thread: the OS ties the signal to the thread that started the server.
   */
  exitWithParent?: boolean;
}

/** Servers still running; killed when this process exits, so none outlives a crashed or force-exited parent. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;
const killOnExit = (child: ChildProcess): void => {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => running.forEach((c) => c.kill('SIGKILL')));
};

let setprivWorks: boolean | undefined;
/** Whether `setpriv --pdeathsig` runs here (Linux with util-linux), checked once. */
const canSetParentDeathSignal = (): boolean =>
  (setprivWorks ??= process.platform === 'linux' && spawnSync('setpriv', ['--pdeathsig', 'TERM', '--', 'true']).status === 0);

/**
 * The command line that runs nats-server: under `setpriv --pdeathsig TERM` when asked to die with its parent. setpriv
 * sets the parent-death signal and execs nats-server in the same process, so the pid, the pid file and the signals are
 * nats-server's own, and no guard process stays around.
 */
const commandFor = (binary: string, args: string[], exitWithParent: boolean): [string, string[]] =>
  exitWithParent && canSetParentDeathSignal() ? ['setpriv', ['--pdeathsig', 'TERM', '--', binary, ...args]] : [binary, args];

/** Asks the OS for a free TCP port on the loopback interface. */
export const freePort = (host = '127.0.0.1'): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });

const canConnect = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

const exited = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

/**
 * A nats-server left running on `storeDir` by a launcher that was killed (SIGKILL, OOM) is stopped first: two
 * servers on one store would corrupt it. It is recognised by the pid file each server writes into its store, and
 * only when that pid still runs nats-server on this very store. Whether its owner is gone is not checked here: the
 * quickstart launcher holds DATA_DIR's lock (launcher/lock.ts) before it starts a server, so a server it finds is an
 * orphan; other callers give each server a store of its own.
 */
const stopStaleServer = async (storeDir: string, pidFile: string): Promise<void> => {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    return;
  }
  const cmdline = `${(argvOf(pid) ?? []).join(' ')} `;
  if (!Number.isSafeInteger(pid) || pid <= 1 || !cmdline.includes('nats-server') || !cmdline.includes(` ${storeDir} `)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 5_000;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
};

/**
 * The nats-server to run: `NATS_SERVER_BIN`, else the pinned current release that `scripts/ensure-nats-server.sh`
 * builds and links as `.tools/nats-server` in the repository, else `nats-server` on the PATH (e.g. Debian's 2.9.10).
 */
export const natsServerBinary = (env: NodeJS.ProcessEnv = process.env): string => {
  if (env.NATS_SERVER_BIN) return env.NATS_SERVER_BIN;
  const linked = resolve(__dirname, '../../../.tools/nats-server');
  return existsSync(linked) ? linked : 'nats-server';
};

/** The version a nats-server binary reports (`2.12.15`), or null when it cannot be run. */
export const natsServerVersion = (binary = natsServerBinary()): string | null => {
  const run = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return run.status === 0 ? (/v?(\d+\.\d+\.\d+)/.exec(run.stdout)?.[1] ?? null) : null;
};

/** True when a nats-server binary can be run. */
export const natsServerAvailable = (binary = natsServerBinary()): boolean => natsServerVersion(binary) !== null;

/**
 * Starts `nats-server -js` bound to loopback with its store in `storeDir`, and resolves once it accepts
 * connections (at most 10 s).
 */
export const startLocalNatsServer = async (options: LocalNatsOptions): Promise<LocalNatsServer> => {
  const host = options.host ?? '127.0.0.1';
  // A server restarted on its port (an outage drill, the quickstart) needs one outside the ephemeral range.
  const port = options.port || (await freeFixedPort(host));
  mkdirSync(options.storeDir, { recursive: true });
  const pidFile = join(options.storeDir, 'nats-server.pid');
  await stopStaleServer(options.storeDir, pidFile);
  const args = ['-js', '-sd', options.storeDir, '-a', host, '-p', String(port), '-P', pidFile, ...(options.extraArgs ?? [])];
  const [command, commandArgs] = commandFor(options.binary ?? natsServerBinary(), args, options.exitWithParent ?? false);
  const child = spawn(command, commandArgs, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  killOnExit(child);
  if (options.log) {
    child.stdout?.pipe(options.log, { end: false });
    child.stderr?.pipe(options.log, { end: false });
  } else {
    child.stdout?.resume();
    child.stderr?.resume();
  }
  const spawnError = new Promise<never>((_, reject) => {
    child.once('error', (error) => reject(new Error(`cannot start nats-server: ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`nats-server exited with code ${code ?? 'null'} during start-up (${args.join(' ')})`)));
  });
  spawnError.catch(() => undefined);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ready = await Promise.race([canConnect(host, port), spawnError]);
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nats-server did not accept connections on ${host}:${port} within 10 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const onExit = options.onExit;
  if (onExit) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`nats-server exited right after it started (${args.join(' ')})`);
    // stop() and kill() remove every 'exit' listener first, so this one only sees exits nobody here asked for.
    child.once('exit', (code, signal) => onExit(code, signal));
  }
  return {
    url: `nats://${host}:${port}`,
    port,
    pid: child.pid ?? 0,
    storeDir: options.storeDir,
    stop: async () => {
      child.removeAllListeners('exit');
      if (child.exitCode !== null || child.signalCode !== null) return;
      const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.kill('SIGTERM');
      await exited(child);
      clearTimeout(kill);
    },
    kill: async () => {
      child.removeAllListeners('exit');
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited(child);
    },
  };
};
