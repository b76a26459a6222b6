import { rmSync } from 'node:fs';
import { runDrill, type DrillReport } from '../drill/drill';
import { startProcessDrillTarget, type ProcessDrillTarget } from '../drill/processTarget';

/**
 * Issue 11's drill with plain processes: a local 3-node NATS cluster (R3), 1 gateway and 2 replicas each of
 * instances, sessions and webhooks. Under a steady load of sends over linked sandbox instances with webhooks, it
 * SIGKILLs the EVENTS leader's node, then one replica of each service, restarts them, and checks that nothing
 * accepted was lost or sent twice, that every webhook arrived, that histories are complete and in order, that no
 * instance had two live connections, and that every failed request was a prompt 503. The same drill runs against
 * the compose stack in Docker (test/containers).
 */
describe('cluster drill (plain processes, 3-node NATS)', () => {
  let target: ProcessDrillTarget;
  let passed = false;

  beforeAll(async () => {
    target = await startProcessDrillTarget();
  }, 90_000);

  afterAll(async () => {
    await target?.dispose();
    // The processes' log is kept (and named in the output) only when the drill failed.
    if (passed && target) rmSync(target.logFile, { force: true });
  }, 30_000);

  it('loses nothing, sends nothing twice and answers 503 at worst when NATS and service replicas are killed', async () => {
    const report: DrillReport = await runDrill(target);
    // One line, to be copied into the README.
    process.stdout.write(`DRILL REPORT ${JSON.stringify({ ...report, failures: report.failures.slice(0, 20) })}\n`);
    if (!report.ok) process.stdout.write(`drill log: ${target.logFile}\n`);
    expect(report.failures).toEqual([]);
    passed = true;
  }, 150_000);
});
