import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';

/** The built quickstart launcher (`npm start` runs it after building). */
export const LAUNCHER = join(resolve(__dirname, '../..'), 'lib/dist/launcher/main.js');

export interface Launched {
  readonly process: ChildProcess;
  /** Everything it printed so far, stdout and stderr interleaved as a terminal shows them. */
  output(): string;
}

/**
 * Runs the launcher as a user would, on `env` over this process's environment; NATS_URL and AUTH_JWT_SECRET are
 * cleared (unless `env` sets them) so it starts its own nats-server and keeps its secret under DATA_DIR.
 * `ownProcessGroup`: started as a shell starts a foreground job (`setsid`), so `kill -INT -<pid>` is what Ctrl-C does.
 */
export const launch = (env: NodeJS.ProcessEnv, options: { ownProcessGroup?: boolean } = {}): Launched => {
  const merged: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...env };
  for (const name of ['NATS_URL', 'NATS_REPLICAS', 'AUTH_JWT_SECRET', 'NATS_PORT', 'NATS_CLUSTER_SIZE', 'HOST']) if (!(name in env)) delete merged[name];
  const child = spawn(process.execPath, [LAUNCHER], { env: merged, stdio: ['ignore', 'pipe', 'pipe'], detached: options.ownProcessGroup ?? false });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { process: child, output: () => output };
};

const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

/** Waits until the banner (with its token) is printed, the launcher exits, or `ms` pass. */
export const untilBannerOrExit = async (launched: Launched, ms: number): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!launched.output().includes('export TOKEN=') && running(launched.process) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
};

/** `launch`, then `untilBannerOrExit`: a launcher that is serving (or has exited: the caller's assertions say why). */
export const startLauncher = async (env: NodeJS.ProcessEnv, ms = 45_000, options: { ownProcessGroup?: boolean } = {}): Promise<Launched> => {
  const launched = launch(env, options);
  await untilBannerOrExit(launched, ms);
  return launched;
};

/** The launcher's JSON log lines with this message (LOG_LEVEL=info shows its starts and restarts). */
export const logLines = (launched: Launched, msg: string): Array<Record<string, unknown>> =>
  launched
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes(`"msg":"${msg}`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * Once the launcher has exited: its last lines (the "Stopped" line) may still be in the pipes, read after the exit
 * event. Their end comes once no process writes there any more; the services it started share its output, so one
 * that outlives it (a SIGKILLed launcher) keeps them open: then at most a second.
 */
const outputRead = (child: ChildProcess): Promise<void> => {
  const ended = (stream: Readable | null): Promise<void> =>
    stream === null || stream.readableEnded ? Promise.resolve() : new Promise((r) => stream.once('end', () => r()));
  return Promise.race([Promise.all([ended(child.stdout), ended(child.stderr)]).then(() => undefined), new Promise<void>((r) => setTimeout(r, 1_000).unref())]);
};

/** The launcher's exit code once it exits by itself, or 'still running' after `ms`. */
export const exitCodeWithin = (launched: Launched, ms: number): Promise<number | null | 'still running'> => {
  const child = launched.process;
  if (!running(child)) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('still running'), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      void outputRead(child).then(() => resolve(code));
    });
  });
};

/** The token the banner prints, if it was printed. */
export const bannerToken = (launched: Launched): string | undefined => /export TOKEN=(\S+)/.exec(launched.output())?.[1];

/** Ctrl-C, as a user stops it; SIGKILL if it has not exited within 20 s. Resolves with its exit code. */
export const stopLauncher = async (launched: Launched): Promise<number | null> => {
  const child = launched.process;
  if (!running(child)) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => void outputRead(child).then(() => r(code))));
  child.kill('SIGINT');
  const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await exited;
  clearTimeout(kill);
  return code;
};
