import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeFixedPort } from '@wagw/lib';
import { exitCodeWithin, launch, logLines, stopLauncher } from '../harness/launcherProcess';
import { alive } from '../harness/processes';

/** The lines a person reads: what the launcher printed, without blank ones. */
const printed = (output: string): string[] => output.split('\n').filter((line) => line.trim() !== '');

/**
 * A value the README's table does not allow stops `npm start` at once with one line naming the variable, exit code 78
 * (EX_CONFIG): not a crash that is restarted for a minute, then reported as a gateway that did not become ready.
 */
describe('launcher with a bad setting', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-badconfig-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it.each([
    ['QR_WAIT_MS', '70000', 'sessions: failed to start: QR_WAIT_MS must be an integer from 1 to 60000, got "70000"'],
    ['WEBHOOK_RETRY_SCHEDULE', 'bogus', 'webhooks: failed to start: WEBHOOK_RETRY_SCHEDULE entry "bogus" is not a duration'],
    ['HTTP_BODY_LIMIT', '1e3', 'gateway: failed to start: HTTP_BODY_LIMIT must be an integer of at least 1, got "1e3"'],
    ['AUTH_JWT_SECRET', 'short', 'gateway: failed to start: AUTH_JWT_SECRET must be at least 32 characters'],
    ['OPS_HOST', '999.1.1.1', 'failed to start: OPS_HOST 999.1.1.1: cannot listen there'],
  ])(
    'that a service refuses (%s=%s): everything stops within seconds, one line says which, exit code 78, no restart',
    async (name, value, line) => {
      const started = Date.now();
      const launched = launch({ DATA_DIR: dataDir, PORT: String(await freeFixedPort()), WA_CONNECTOR: 'sandbox', LOG_LEVEL: 'info', [name]: value });
      const code = await exitCodeWithin(launched, 15_000);
      if (code === 'still running') await stopLauncher(launched);
      const output = launched.output();
      expect({ code, seconds: Math.round((Date.now() - started) / 1_000) }).toEqual({ code: 78, seconds: expect.any(Number) });
      expect(Date.now() - started).toBeLessThan(10_000);
      // One line names the variable, plain (the service's own message, printed once by the launcher), and no other does.
      expect(printed(output).filter((l) => l.includes(name))).toEqual([expect.stringContaining(line)]);
      expect(printed(output).filter((l) => l.includes(name))[0]).not.toMatch(/^\{/);
      expect(logLines(launched, 'service exited; restarting')).toEqual([]);
      expect(output).not.toContain('did not become ready');
      // The last two lines, in either order: the refusal goes to stderr and this one to stdout, two pipes read apart.
      expect(printed(output).slice(-2)).toContain('  Stopped: every service and nats-server (exit code 78).');
      // Every process it started is gone: nats-server and the services (each logged its pid).
      const pids = printed(output)
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { pid: number; natsPid?: number })
        .flatMap((l) => [l.pid, ...(l.natsPid ? [l.natsPid] : [])]);
      expect(pids.filter((pid) => pid !== launched.process.pid && alive(pid))).toEqual([]);
    },
    30_000,
  );

  it.each([
    ['PORT', 'abc', 'PORT must be an integer from 0 to 65535, got "abc"'],
    ['NATS_PORT', '70000', 'NATS_PORT must be an integer from 0 to 65535, got "70000"'],
    ['NATS_CLUSTER_SIZE', 'abc', 'NATS_CLUSTER_SIZE must be'],
    ['NATS_CLUSTER_SIZE', '50', 'NATS_CLUSTER_SIZE must be an integer from 0 to 5, got "50"'],
    ['NATS_REPLICAS', 'abc', 'NATS_REPLICAS must be'],
    ['NATS_REPLICAS', '0', 'NATS_REPLICAS must be from 1 to 5, got 0'],
    ['INSTANCES_OPS_PORT', '99999', 'INSTANCES_OPS_PORT must be an integer from 0 to 65535, got "99999"'],
    ['NATS_SERVER_BIN', '/nonexistent/nats-server', 'NATS_SERVER_BIN=/nonexistent/nats-server'],
    ['DATA_DIR', 'a regular file', 'DATA_DIR'],
    ['NATS_URL', 'foo://bar', 'NATS_URL: "foo://bar" is not a NATS server URL'],
  ])(
    'of its own (%s=%s): one plain line naming it, no stack, exit code 78, nothing started',
    async (name, value, message) => {
      const file = join(dataDir, 'not-a-directory');
      writeFileSync(file, '');
      const env = { DATA_DIR: dataDir, PORT: String(await freeFixedPort()), WA_CONNECTOR: 'sandbox', LOG_LEVEL: 'info' };
      const launched = launch({ ...env, [name]: name === 'DATA_DIR' ? file : value });
      const code = await exitCodeWithin(launched, 15_000);
      if (code === 'still running') await stopLauncher(launched);
      expect({ code, printed: printed(launched.output()) }).toEqual({ code: 78, printed: [expect.stringContaining(message)] });
      expect(launched.output()).toContain(name);
    },
    30_000,
  );
});
