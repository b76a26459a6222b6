import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freeFixedPort } from '@wagw/lib';
import { bannerToken, exitCodeWithin, launch, startLauncher, stopLauncher, type Launched } from '../harness/launcherProcess';
import { alive, childrenOf } from '../harness/processes';
import { sleep } from '../harness/wait';

const ROOT = resolve(__dirname, '../..');

const createInstance = (base: string, token: string | undefined): Promise<number> =>
  fetch(`${base}/v1/create_instance`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

/** Runs the quickstart's launcher (built by `npm test`) as a user would, on a temporary DATA_DIR. */
describe('launcher (the quickstart process tree)', () => {
  let dataDir: string;
  let launcher: Launched;
  let port: number;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-'));
    port = await freeFixedPort();
    launcher = await startLauncher({ DATA_DIR: dataDir, PORT: String(port) });
  }, 60_000);

  afterAll(async () => {
    await stopLauncher(launcher);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the URL and a token that works against the running services', async () => {
    expect(launcher.output()).toContain(`Gateway ready:  http://127.0.0.1:${port}/v1`);
    const token = bannerToken(launcher);
    expect(token).toBeDefined();
    const response = await fetch(`http://127.0.0.1:${port}/v1/create_instance`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 200, instance_id: expect.stringMatching(/^[0-9A-F]{20}$/) });
  });

  it('keeps its generated JWT secret under DATA_DIR, readable by the owner only, and the token command uses it', async () => {
    expect(statSync(join(dataDir, 'jwt-secret')).mode & 0o777).toBe(0o600);
    // The banner's command names that DATA_DIR, silent, so that `$(...)` captures the token alone.
    expect(launcher.output()).toContain(`More tokens: DATA_DIR=${dataDir} npm run --silent token -- --account NAME.`);
    const cli = spawnSync(process.execPath, [join(ROOT, 'lib/dist/cli/token.js'), '--account', 'second'], {
      env: { ...process.env, DATA_DIR: dataDir, AUTH_JWT_SECRET: '' },
      encoding: 'utf8',
    });
    expect(cli.status).toBe(0);
    const response = await fetch(`http://127.0.0.1:${port}/v1/list_instances`, { headers: { authorization: `Bearer ${cli.stdout.trim()}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ instances: [] });
  });

  it('refuses a second npm start on the same DATA_DIR (same PORT or another) with exit code 1, and the first keeps serving', async () => {
    const seconds: Array<{ code: number | null | 'still running'; output: string }> = [];
    for (const secondPort of [port, await freeFixedPort()]) {
      const second = launch({ DATA_DIR: dataDir, PORT: String(secondPort) });
      const code = await exitCodeWithin(second, 20_000);
      if (code === 'still running') await stopLauncher(second);
      seconds.push({ code, output: second.output() });
    }
    const refusal = `Another npm start (pid ${launcher.process.pid}) is running on ${dataDir}`;
    expect(seconds).toEqual([
      { code: 1, output: expect.stringContaining(refusal) },
      { code: 1, output: expect.stringContaining(refusal) },
    ]);
    expect(seconds.map((s) => s.output).join('')).not.toContain('Gateway ready');
    // Its nats-server was left alone: the first gateway still answers.
    const token = bannerToken(launcher);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push(await createInstance(`http://127.0.0.1:${port}`, token));
    expect(statuses).toEqual([200, 200, 200]);
  }, 60_000);

  it('stops every process cleanly on Ctrl-C (SIGINT)', async () => {
    const code = await Promise.race([stopLauncher(launcher), new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 25_000).unref())]);
    expect(code).toBe(0);
    // Its last line says that everything stopped (the services' own last lines only say that each is shutting down).
    expect(launcher.output().trimEnd().split('\n').at(-1)).toContain('Stopped: every service and nats-server.');
    const stillServing = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      () => true,
      () => false,
    );
    expect(stillServing).toBe(false);
    // The lock on DATA_DIR is released: the next start will not be refused.
    expect(existsSync(join(dataDir, 'launcher.pid'))).toBe(false);
  }, 30_000);
});

describe('launcher when PORT is taken by another program', () => {
  let dataDir: string;
  let other: Server;
  let port: number;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-port-'));
    port = await freeFixedPort();
    // Another local web app, answering 200 to every path as development servers of single-page apps do.
    other = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>another app</html>'));
    await new Promise<void>((r) => other.listen(port, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    await new Promise((r) => other.close(r));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('says so and exits with code 1 before starting anything, instead of printing a token for the other program', async () => {
    const launched = launch({ DATA_DIR: dataDir, PORT: String(port), WA_CONNECTOR: 'sandbox' });
    const code = await exitCodeWithin(launched, 20_000);
    if (code === 'still running') await stopLauncher(launched);
    expect({ code, output: launched.output() }).toEqual({ code: 1, output: expect.stringContaining(`PORT ${port} on 127.0.0.1 is in use`) });
    expect(launched.output()).not.toContain('Gateway ready');
    expect(existsSync(join(dataDir, 'nats'))).toBe(false);
  }, 30_000);

  it('says so for a NATS_PORT in use too, and exits with code 1 before starting anything (it restarted nats-server in a loop)', async () => {
    const launched = launch({ DATA_DIR: dataDir, PORT: String(await freeFixedPort()), NATS_PORT: String(port), WA_CONNECTOR: 'sandbox' });
    const code = await exitCodeWithin(launched, 20_000);
    if (code === 'still running') await stopLauncher(launched);
    expect({ code, output: launched.output() }).toEqual({ code: 1, output: expect.stringContaining(`NATS_PORT ${port} on 127.0.0.1 is in use`) });
    expect(existsSync(join(dataDir, 'nats'))).toBe(false);
  }, 30_000);
});

describe('launcher with PORT=0 (any free port)', () => {
  let dataDir: string;
  let launched: Launched | null = null;
  afterAll(async () => {
    if (launched) await stopLauncher(launched);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('picks a port, becomes ready and prints the URL it listens on (it polled port 0 and gave up)', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-port0-'));
    launched = await startLauncher({ DATA_DIR: dataDir, PORT: '0', WA_CONNECTOR: 'sandbox' }, 60_000);
    const port = Number(/Gateway ready: {2}http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(launched.output())?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(await createInstance(`http://127.0.0.1:${port}`, bannerToken(launched))).toBe(200);
  }, 90_000);
});

describe('launcher with NATS_REPLICAS=3 and its single nats-server', () => {
  it('says that it needs a cluster and exits with code 78 (a bad setting), instead of keeping one copy behind the setting', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-replicas-'));
    try {
      const launched = launch({ DATA_DIR: dataDir, PORT: String(await freeFixedPort()), NATS_REPLICAS: '3', WA_CONNECTOR: 'sandbox' });
      const code = await exitCodeWithin(launched, 20_000);
      if (code === 'still running') await stopLauncher(launched);
      expect({ code, output: launched.output() }).toEqual({ code: 78, output: expect.stringContaining('NATS_REPLICAS=3 needs a cluster') });
      expect(existsSync(join(dataDir, 'nats'))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('launcher with HOST=::1 (IPv6 loopback)', () => {
  let dataDir: string;
  let launched: Launched | null = null;
  afterAll(async () => {
    if (launched) await stopLauncher(launched);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('becomes ready and prints URLs with the address in brackets, which work', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-ipv6-'));
    const port = await freeFixedPort('::1');
    launched = await startLauncher({ DATA_DIR: dataDir, PORT: String(port), HOST: '::1', WA_CONNECTOR: 'sandbox' }, 60_000);
    expect(launched.output()).toContain(`Gateway ready:  http://[::1]:${port}/v1`);
    expect(await createInstance(`http://[::1]:${port}`, bannerToken(launched))).toBe(200);
  }, 90_000);
});

describe('launcher killed with SIGKILL', () => {
  it('leaves no process of its own running (services and nats-server), and the next start on the same DATA_DIR serves', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-kill-'));
    const env = { DATA_DIR: dataDir, PORT: String(await freeFixedPort()), WA_CONNECTOR: 'sandbox' };
    const first = await startLauncher(env);
    let next: Launched | null = null;
    let children: number[] = [];
    try {
      const started = childrenOf(first.process.pid!);
      children = started.map((c) => c.pid);
      const survivors = (): string[] => started.filter((c) => alive(c.pid)).map((c) => c.cmdline);
      expect(started.filter((c) => c.cmdline.includes('nats-server'))).toHaveLength(1);
      expect(started.filter((c) => c.cmdline.includes('/dist/main.js'))).toHaveLength(4);
      first.process.kill('SIGKILL');
      // Nothing waits for a next start to clean up: the services see their parent gone, nats-server is told by the OS.
      // A service that sees its launcher gone shuts down within 5 s (runMain), noticed within 1 s; the rest is a loaded machine's slack.
      const deadline = Date.now() + 15_000;
      while (children.some(alive) && Date.now() < deadline) await sleep(200);
      expect(survivors()).toEqual([]);
      // The killed launcher's lock names a pid that is gone: it does not count, and the store is free again.
      next = await startLauncher(env);
      expect(await createInstance(`http://127.0.0.1:${env.PORT}`, bannerToken(next))).toBe(200);
      expect(await stopLauncher(next)).toBe(0);
    } finally {
      for (const launched of [first, next]) if (launched) await stopLauncher(launched);
      children.forEach((pid) => alive(pid) && process.kill(pid, 'SIGKILL'));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
