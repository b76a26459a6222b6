import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '@wagw/lib';
import { bannerToken, exitCodeWithin, launch, stopLauncher, untilBannerOrExit, type Launched } from '../harness/launcherProcess';

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
    port = await freePort();
    launcher = launch({ DATA_DIR: dataDir, PORT: String(port) });
    await untilBannerOrExit(launcher, 45_000);
  }, 60_000);

  afterAll(async () => {
    if (launcher.process.exitCode === null) launcher.process.kill('SIGKILL');
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
    for (const secondPort of [port, await freePort()]) {
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
    port = await freePort();
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
});

describe('launcher with NATS_REPLICAS=3 and its single nats-server', () => {
  it('says that it needs a cluster and exits with code 1, instead of keeping one copy behind the setting', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-replicas-'));
    try {
      const launched = launch({ DATA_DIR: dataDir, PORT: String(await freePort()), NATS_REPLICAS: '3', WA_CONNECTOR: 'sandbox' });
      const code = await exitCodeWithin(launched, 20_000);
      if (code === 'still running') await stopLauncher(launched);
      expect({ code, output: launched.output() }).toEqual({ code: 1, output: expect.stringContaining('NATS_REPLICAS=3 needs a cluster') });
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
    const port = await freePort('::1');
    launched = launch({ DATA_DIR: dataDir, PORT: String(port), HOST: '::1', WA_CONNECTOR: 'sandbox' });
    await untilBannerOrExit(launched, 60_000);
    expect(launched.output()).toContain(`Gateway ready:  http://[::1]:${port}/v1`);
    expect(await createInstance(`http://[::1]:${port}`, bannerToken(launched))).toBe(200);
  }, 90_000);
});

/** The pids and command lines of `ppid`'s children, from /proc. */
const childrenOf = (ppid: number): Array<{ pid: number; cmdline: string }> =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return parent === ppid ? [{ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ') }] : [];
      } catch {
        return [];
      }
    });

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
};

/** Starts the launcher on `dataDir` and waits until it printed its token (at most 45 s). */
const startLauncher = async (dataDir: string): Promise<ChildProcess> => {
  const launched = launch({ DATA_DIR: dataDir, PORT: String(await freePort()), WA_CONNECTOR: 'sandbox' });
  await untilBannerOrExit(launched, 45_000);
  return launched.process;
};

describe('launcher killed with SIGKILL', () => {
  it('leaves no service running, and the next start on the same DATA_DIR stops the orphaned nats-server first', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-kill-'));
    const launcher = await startLauncher(dataDir);
    let next: ChildProcess | null = null;
    let nats: number[] = [];
    try {
      const children = childrenOf(launcher.pid!);
      nats = children.filter((c) => c.cmdline.includes('nats-server')).map((c) => c.pid);
      const services = children.filter((c) => c.cmdline.includes('/dist/main.js')).map((c) => c.pid);
      expect(services).toHaveLength(4);
      launcher.kill('SIGKILL');
      const deadline = Date.now() + 20_000;
      while (services.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(services.filter(alive)).toEqual([]);
      // The nats-server has no way to notice; a new launcher on the same store stops it before starting its own
      // (the killed launcher's lock on DATA_DIR names a pid that is gone, so it does not count).
      expect(nats.filter(alive)).toHaveLength(1);
      next = await startLauncher(dataDir);
      expect(nats.filter(alive)).toEqual([]);
      expect(childrenOf(next.pid!).filter((c) => c.cmdline.includes('/dist/main.js'))).toHaveLength(4);
      const exited = new Promise((r) => next!.once('exit', r));
      next.kill('SIGINT');
      await exited;
    } finally {
      for (const child of [launcher, next]) if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      nats.forEach((pid) => alive(pid) && process.kill(pid, 'SIGKILL'));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
