import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../log';

/** A service process the launcher keeps running: restarted after a crash, stopped with SIGTERM. */
export class Supervised {
  private child: ChildProcess | null = null;
  private stopping = false;
  private restarts = 0;

  constructor(
    readonly name: string,
    private readonly script: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const child = spawn(process.execPath, [this.script], { env: this.env, stdio: ['ignore', 'inherit', 'inherit'] });
    this.child = child;
    child.once('exit', (code, signal) => {
      if (this.stopping) return;
      const delay = Math.min(30_000, 500 * 2 ** this.restarts++);
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
