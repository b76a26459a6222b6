import type { ReadinessCheck } from './opsRoutes';
import { startOpsServer, type OpsServer } from './opsServer';

/** Readiness while a service starts: not ready, saying what it waits for, until its real check takes over. */
export class StartupReadiness {
  private check: ReadinessCheck | null = null;

  constructor(private phase: string) {}

  waitingFor(phase: string): void {
    this.phase = phase;
  }

  /** Start-up is over: from now on `check` decides. */
  started(check: ReadinessCheck): void {
    this.check = check;
  }

  readonly readiness: ReadinessCheck = async () => (this.check ? this.check() : { ready: false, reason: `starting: ${this.phase}` });
}

/**
 * Starts the ops server before anything else, so that `/healthz` answers and `/readyz` says what start-up waits for
 * (NATS unreachable, a cluster electing its leader) while `start` runs; a failed start closes it again.
 */
export const startBehindOps = async <S>(
  options: { host: string; port: number },
  start: (startup: StartupReadiness) => Promise<S>,
): Promise<{ ops: OpsServer; service: S }> => {
  const startup = new StartupReadiness('connecting to NATS');
  const ops = await startOpsServer({ ...options, readiness: startup.readiness });
  try {
    return { ops, service: await start(startup) };
  } catch (error) {
    await ops.close();
    throw error;
  }
};
