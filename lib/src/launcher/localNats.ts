import { Writable } from 'node:stream';
import { MAX_REPLICAS, startLocalNatsServer, type LocalClusterPlan, type LocalNatsOptions, type LocalNatsServer } from '../nats';
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
  /**
   * Store, port (0: a free one, kept for every restart: the services reconnect to the URL they were given), binary and
   * a cluster node's arguments; the watcher adds its output capture, exit hook, process group and parent-death signal.
   */
  server: Omit<LocalNatsOptions, 'log' | 'onExit' | 'detached' | 'exitWithParent'>;
  /** A cluster node's name (n1..nN), in every log line about it; absent for the single server. */
  node?: string;
  logger: Logger;
  policy?: RestartPolicy;
}

/**
 * One of the launcher's own nats-servers (the single one, or a cluster node), kept running while the launcher runs:
 * when it exits (a crash, an OOM kill, a stray `kill`) the exit and the tail of its output are logged, and it is
 * started again on the same ports and store with the services' backoff. Without this every service stayed unready
 * for good on a single server (they reconnect by themselves, but to nothing), and a cluster ran one node short, then
 * lost its quorum at the next death, with no word in the log. It runs in a process group of its own, so a Ctrl-C in
 * the terminal does not stop it before the services have closed (see `Supervised`), and it ends when the launcher dies
 * even by SIGKILL (`exitWithParent`); where that is not available, the next start on the same DATA_DIR stops it first.
 */
export class WatchedNatsServer {
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private restarting: Promise<void> | null = null;
  private readonly backoff: RestartBackoff;
  private server: LocalNatsServer | null = null;

  private constructor(private options: WatchedNatsOptions) {
    this.backoff = new RestartBackoff(options.policy ?? DEFAULT_RESTART_POLICY);
  }

  /** Starts the server; a first start that fails throws (the launcher cannot go on without NATS). */
  static async start(options: WatchedNatsOptions): Promise<WatchedNatsServer> {
    const watched = new WatchedNatsServer(options);
    const server = await watched.launch(new OutputTail());
    watched.options = { ...options, server: { ...options.server, port: server.port } };
    options.logger.info(watched.describe(), 'started local nats-server');
    return watched;
  }

  get url(): string {
    return this.current.url;
  }

  get pid(): number {
    return this.current.pid;
  }

  get storeDir(): string {
    return this.current.storeDir;
  }

  /** Stops the server for good (no restart after this); waits for a restart under way to finish first. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    await this.restarting;
    await this.server?.stop();
  }

  private get current(): LocalNatsServer {
    if (!this.server) throw new Error('the nats-server has not started');
    return this.server;
  }

  private describe(): Record<string, unknown> {
    return { ...(this.options.node ? { node: this.options.node } : {}), url: this.current.url, natsPid: this.current.pid, storeDir: this.current.storeDir };
  }

  private async launch(tail: OutputTail): Promise<LocalNatsServer> {
    this.server = await startLocalNatsServer({
      ...this.options.server,
      log: tail,
      detached: true,
      exitWithParent: true,
      onExit: (code, signal) => this.exited(code, signal, tail),
    });
    return this.server;
  }

  private exited(code: number | null, signal: NodeJS.Signals | null, tail: OutputTail): void {
    if (this.stopping) return;
    const restartInMs = this.backoff.nextDelayMs();
    this.options.logger.error(
      { ...this.describe(), code, signal, output: tail.lines(), restartInMs },
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
      await this.launch(tail);
      this.backoff.started();
      this.options.logger.warn(this.describe(), 'restarted local nats-server');
    } catch (error) {
      if (this.stopping) return;
      const restartInMs = this.backoff.nextDelayMs();
      const node = this.options.node ? { node: this.options.node } : {};
      this.options.logger.error({ ...node, err: error, output: tail.lines(), restartInMs }, 'local nats-server did not start again; retrying');
      this.scheduleRestart(restartInMs);
    }
  }
}

/** A local cluster's nodes, each under a watcher of its own: a node that dies is restarted like the single server. */
export interface WatchedNatsCluster {
  readonly url: string;
  readonly nodes: readonly WatchedNatsServer[];
  stop(): Promise<void>;
}

/** Starts every node of `plan` at once; if one cannot start, the others are stopped and the first error is thrown. */
export const startWatchedCluster = async (plan: LocalClusterPlan, logger: Logger, policy?: RestartPolicy): Promise<WatchedNatsCluster> => {
  const started = await Promise.allSettled(
    plan.nodes.map(({ name, options }) => WatchedNatsServer.start({ server: options, node: name, logger, ...(policy ? { policy } : {}) })),
  );
  const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(nodes.map((node) => node.stop()));
    throw failed.reason;
  }
  return { url: plan.url, nodes, stop: async () => void (await Promise.all(nodes.map((node) => node.stop()))) };
};

/**
 * The replicas of every stream and bucket on the launcher's own NATS: `NATS_REPLICAS` when set, else min(size, 3); or
 * why the setting cannot be honoured. It is never overridden silently: an operator who asked for 3 copies on the
 * single local server (one copy) would believe data to be safer than it is, and the services would refuse it anyway
 * (after 15 s, crash-looping), so the launcher refuses at once with the fix. The fix it gives is one that starts:
 * a value outside 1 to MAX_REPLICAS has none but another value (a bigger cluster would not keep 9 copies either).
 */
export const localReplicas = (configured: number | undefined, size: number): { replicas: number } | { problem: string } => {
  const servers = Math.max(size, 1);
  const unset = `leave it unset (${Math.min(servers, 3)})`;
  if (configured === undefined) return { replicas: Math.min(servers, 3) };
  if (!Number.isInteger(configured) || configured < 1 || configured > MAX_REPLICAS) {
    const most = Math.min(servers, MAX_REPLICAS);
    return { problem: `NATS_REPLICAS must be from 1 to ${MAX_REPLICAS}, got ${configured}: use ${most === 1 ? '1' : `1 to ${most}`}, or ${unset}` };
  }
  if (configured <= servers) return { replicas: configured };
  if (servers === 1)
    return {
      problem: `NATS_REPLICAS=${configured} needs a cluster: the local nats-server keeps one copy. Start with NATS_CLUSTER_SIZE=${configured}, or without NATS_REPLICAS`,
    };
  return {
    problem: `NATS_REPLICAS=${configured} does not fit the local ${size}-node cluster: use 1 to ${size}, start with NATS_CLUSTER_SIZE=${configured}, or ${unset}`,
  };
};
