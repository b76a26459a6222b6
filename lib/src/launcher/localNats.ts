import { Writable } from 'node:stream';
import { startLocalNatsServer, type LocalNatsServer } from '../nats';
import type { Logger } from '../log';
import { DEFAULT_RESTART_POLICY, RestartBackoff, type RestartPolicy } from './children';

/** How much of a nats-server's output is kept to explain its exit (its last lines say why it stopped). */
const TAIL_CHARS = 4_096;
const TAIL_LINES = 20;

/** The last few KiB a process wrote: nats-server's log is not shown while it runs, only when it exits. */
class OutputTail extends Writable {
  private text = '';

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text = (this.text + chunk.toString()).slice(-TAIL_CHARS);
    done();
  }

  lines(): string[] {
    return this.text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(-TAIL_LINES);
  }
}

export interface WatchedNatsOptions {
  storeDir: string;
  /** 0: a free port, kept for every restart (the services reconnect to the URL they were given). */
  port: number;
  binary: string;
  logger: Logger;
  policy?: RestartPolicy;
}

/**
 * The launcher's own nats-server, kept running while the launcher runs: when it exits (a crash, an OOM kill, a stray
 * `kill`) the exit and the tail of its output are logged, and it is started again on the same port and store with
 * the services' backoff. Without this every service stayed unready for good (they reconnect by themselves, but to
 * nothing), with no word in the log. It runs in a process group of its own, so a Ctrl-C in the terminal does not stop
 * it before the services have closed (see `Supervised`). It ends when the launcher dies, even by SIGKILL
 * (`exitWithParent`); where that is not available, the next start on the same DATA_DIR stops it first.
 */
export class WatchedNatsServer {
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private restarting: Promise<void> | null = null;
  private readonly backoff: RestartBackoff;

  private constructor(
    private server: LocalNatsServer,
    private readonly options: WatchedNatsOptions,
  ) {
    this.backoff = new RestartBackoff(options.policy ?? DEFAULT_RESTART_POLICY);
  }

  /** Starts the server; a first start that fails throws (the launcher cannot go on without NATS). */
  static async start(options: WatchedNatsOptions): Promise<WatchedNatsServer> {
    let watched: WatchedNatsServer | null = null;
    const tail = new OutputTail();
    const server = await startLocalNatsServer({
      storeDir: options.storeDir,
      port: options.port,
      binary: options.binary,
      log: tail,
      detached: true,
      exitWithParent: true,
      onExit: (code, signal) => watched?.exited(code, signal, tail),
    });
    watched = new WatchedNatsServer(server, { ...options, port: server.port });
    return watched;
  }

  get url(): string {
    return this.server.url;
  }

  get pid(): number {
    return this.server.pid;
  }

  get storeDir(): string {
    return this.server.storeDir;
  }

  /** Stops the server for good (no restart after this); waits for a restart under way to finish first. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    await this.restarting;
    await this.server.stop();
  }

  private exited(code: number | null, signal: NodeJS.Signals | null, tail: OutputTail): void {
    if (this.stopping) return;
    const restartInMs = this.backoff.nextDelayMs();
    this.options.logger.error(
      { natsPid: this.server.pid, code, signal, output: tail.lines(), restartInMs },
      'local nats-server exited; restarting it on the same port and store',
    );
    this.scheduleRestart(restartInMs);
  }

  private scheduleRestart(delayMs: number): void {
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.restarting = this.restart().finally(() => (this.restarting = null));
    }, delayMs);
  }

  private async restart(): Promise<void> {
    if (this.stopping) return;
    const tail = new OutputTail();
    try {
      this.server = await startLocalNatsServer({
        storeDir: this.options.storeDir,
        port: this.options.port,
        binary: this.options.binary,
        log: tail,
        detached: true,
        exitWithParent: true,
        onExit: (code, signal) => this.exited(code, signal, tail),
      });
      this.backoff.started();
      this.options.logger.warn({ url: this.server.url, natsPid: this.server.pid, storeDir: this.server.storeDir }, 'restarted local nats-server');
    } catch (error) {
      if (this.stopping) return;
      const restartInMs = this.backoff.nextDelayMs();
      this.options.logger.error({ err: error, output: tail.lines(), restartInMs }, 'local nats-server did not start again; retrying');
      this.scheduleRestart(restartInMs);
    }
  }
}

/**
 * The replicas of every stream and bucket on the launcher's own NATS: `NATS_REPLICAS` when set, else min(size, 3); or
 * why the setting cannot be honoured. It is never overridden silently: an operator who asked for 3 copies on the
 * single local server (one copy) would believe data to be safer than it is, and the services would refuse it anyway
 * (after 15 s, crash-looping), so the launcher refuses at once with the fix.
 */
export const localReplicas = (configured: number | undefined, size: number): { replicas: number } | { problem: string } => {
  if (configured === undefined) return { replicas: Math.min(size, 3) };
  if (configured >= 1 && configured <= Math.min(size, 5)) return { replicas: configured };
  if (size <= 1)
    return {
      problem: `NATS_REPLICAS=${configured} needs a cluster: the local nats-server keeps one copy. Start with NATS_CLUSTER_SIZE=${Math.max(configured, 2)}, or without NATS_REPLICAS`,
    };
  return {
    problem: `NATS_REPLICAS=${configured} does not fit the local ${size}-node cluster: use 1 to ${Math.min(size, 5)}, or leave it unset (${Math.min(size, 3)})`,
  };
};
