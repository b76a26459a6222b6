import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../log';
import { EXIT_BAD_CONFIG, isBadConfigReport, LAUNCHER_IPC_ENV, startFailureLine } from '../ops';

export interface RestartPolicy {
  /** The first restart's delay, doubled on each crash that follows (default 500 ms). */
  baseDelayMs: number;
  /** The longest delay (default 30 s). */
  maxDelayMs: number;
  /** A process that ran this long before it exited was healthy: its restart starts over at `baseDelayMs` (default 60 s). */
  healthyRunMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { baseDelayMs: 500, maxDelayMs: 30_000, healthyRunMs: 60_000 };

/**
 * Restart delays for one supervised process. The doubling counts crashes in a row only: a process that crashed 6
 * times at start-up and then ran for a day must not wait the maximum after its next crash, so a run of at least
 * `healthyRunMs` starts the count over.
 */
export class RestartBackoff {
  private crashes = 0;
  private startedAt = Date.now();

  constructor(private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY) {}

  /** Call when the process (re)starts. */
  started(): void {
    this.startedAt = Date.now();
  }

  /** Call when it exited unexpectedly: how long to wait before starting it again. */
  nextDelayMs(): number {
    if (Date.now() - this.startedAt >= this.policy.healthyRunMs) this.crashes = 0;
    return Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** this.crashes++);
  }
}

export interface SupervisedOptions {
  policy?: RestartPolicy;
  /**
   * Called, instead of a restart, when the process exits with code 78 (a bad setting: a restart would be refused the
   * same way), with the one line that says which: its own message, sent over the IPC channel (runMain).
   */
  onBadConfig?: (line: string) => void;
}

/**
 * A service process the launcher keeps running: restarted after a crash (with backoff), stopped with SIGTERM. It runs
 * in a process group of its own (detached), so a Ctrl-C in the terminal (SIGINT to the whole foreground group) reaches
 * the launcher alone, which stops the services before the nats-server they need to close cleanly (release leases,
 * write checkpoints), and never mistakes a service's own SIGINT exit for a crash. A launcher that is SIGKILLed cannot
 * stop it: the launcher starts it with EXIT_WITH_PARENT=1, and it stops itself when its parent pid changes
 * (ops/runMain.ts), whatever its process group.
 */
export class Supervised {
  private child: ChildProcess | null = null;
  private stopping = false;
  private readonly backoff: RestartBackoff;

  constructor(
    readonly name: string,
    private readonly script: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly logger: Logger,
    private readonly options: SupervisedOptions = {},
  ) {
    this.backoff = new RestartBackoff(options.policy ?? DEFAULT_RESTART_POLICY);
  }

  start(): void {
    // The IPC channel carries a bad setting's message (BadConfigReport); the output stays the terminal's own.
    const env = { ...this.env, [LAUNCHER_IPC_ENV]: '1' };
    const child = spawn(process.execPath, [this.script], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
    this.child = child;
    this.backoff.started();
    let badConfig: string | null = null;
    child.on('message', (message) => {
      if (isBadConfigReport(message)) badConfig = message.message;
    });
    // 'close', not 'exit': it comes after the IPC channel has closed, so a message sent before exiting has arrived.
    child.once('close', (code, signal) => {
      if (this.stopping) return;
      if (code === EXIT_BAD_CONFIG) {
        const line = startFailureLine(this.name, badConfig ?? 'a bad setting (see its log above)');
        if (this.options.onBadConfig) this.options.onBadConfig(line);
        else this.logger.error({ service: this.name, code }, `${line}; not restarting it`);
        return;
      }
      const delay = this.backoff.nextDelayMs();
      this.logger.error({ service: this.name, code, signal, restartInMs: delay }, 'service exited; restarting');
      setTimeout(() => !this.stopping && this.start(), delay).unref();
    });
  }

  /** SIGTERM, then SIGKILL after 10 s; resolves when the process is gone. */
  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
}
