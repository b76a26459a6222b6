import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../log';
import { RestartBackoff, Supervised } from './children';

describe('RestartBackoff', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('doubles the delay on crashes in a row up to the maximum, and starts over after a healthy run', () => {
    const backoff = new RestartBackoff({ baseDelayMs: 500, maxDelayMs: 30_000, healthyRunMs: 60_000 });
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      backoff.started();
      jest.advanceTimersByTime(1_000);
      delays.push(backoff.nextDelayMs());
    }
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    // An hour up, then a crash: a fresh crash, not the 9th in a row.
    backoff.started();
    jest.advanceTimersByTime(3_600_000);
    expect(backoff.nextDelayMs()).toBe(500);
    backoff.started();
    jest.advanceTimersByTime(59_000);
    expect(backoff.nextDelayMs()).toBe(1_000);
  });
});

describe('Supervised restarts', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'wagw-supervised-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('waits the base delay again after a run longer than healthyRunMs, however many crashes came before', async () => {
    // Exits at once three times, then runs 600 ms (longer than healthyRunMs) and exits again.
    const counter = join(dir, 'runs');
    const script = join(dir, 'crashy.js');
    writeFileSync(counter, '0');
    writeFileSync(
      script,
      `const fs = require('fs'); const n = Number(fs.readFileSync(${JSON.stringify(counter)}, 'utf8')) + 1;
       fs.writeFileSync(${JSON.stringify(counter)}, String(n)); setTimeout(() => process.exit(1), n <= 3 ? 0 : 600);`,
    );
    const delays: number[] = [];
    const logger = { error: (fields: { restartInMs: number }) => delays.push(fields.restartInMs) } as unknown as Logger;
    const service = new Supervised('crashy', script, process.env, logger, { policy: { baseDelayMs: 20, maxDelayMs: 10_000, healthyRunMs: 400 } });
    service.start();
    const deadline = Date.now() + 15_000;
    while (delays.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await service.stop();
    expect(delays.slice(0, 4)).toEqual([20, 40, 80, 20]);
  }, 20_000);

  it.each([
    [
      'sends its message first (as runMain does under the launcher)',
      `process.send({ type: 'bad_config', message: 'QR_WAIT_MS must be an integer from 1 to 60000, got "70000"' }, () => process.exit(78));`,
      'qr: failed to start: QR_WAIT_MS must be an integer from 1 to 60000, got "70000"',
    ],
    ['sends nothing (its own log says why)', 'process.exit(78);', 'qr: failed to start: a bad setting (see its log above)'],
  ])(
    'does not restart a service that exits 78 (a bad setting) and %s: one line for the launcher to print',
    async (_how, body, line) => {
      const counter = join(dir, `runs-${line.length}`);
      const script = join(dir, `badconfig-${line.length}.js`);
      writeFileSync(counter, '0');
      writeFileSync(
        script,
        `const fs = require('fs'); fs.writeFileSync(${JSON.stringify(counter)}, String(Number(fs.readFileSync(${JSON.stringify(counter)}, 'utf8')) + 1));
       if (process.env.LAUNCHER_IPC !== '1') process.exit(1);
       ${body}`,
      );
      const restarts: unknown[] = [];
      const logger = { error: (fields: unknown) => restarts.push(fields) } as unknown as Logger;
      const lines: string[] = [];
      const service = new Supervised('qr', script, process.env, logger, {
        policy: { baseDelayMs: 20, maxDelayMs: 100, healthyRunMs: 60_000 },
        onBadConfig: (l) => lines.push(l),
      });
      service.start();
      const deadline = Date.now() + 10_000;
      while (lines.length === 0 && restarts.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      // Time for a restart it must not make (the base delay is 20 ms).
      await new Promise((r) => setTimeout(r, 300));
      await service.stop();
      expect({ lines, restarts, runs: readFileSync(counter, 'utf8') }).toEqual({ lines: [line], restarts: [], runs: '1' });
    },
    20_000,
  );
});
