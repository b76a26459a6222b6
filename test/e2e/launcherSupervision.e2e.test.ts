import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeFixedPort } from '@wagw/lib';
import { bannerToken, logLines, startLauncher, stopLauncher, type Launched } from '../harness/launcherProcess';
import { alive, childrenOf, processGroupOf } from '../harness/processes';
import { eventually, sleep } from '../harness/wait';

/** The launcher keeps its own nats-server running: a crash of it is logged and repaired, not a silent outage. */
describe('launcher when its nats-server dies', () => {
  let dataDir: string;
  let launched: Launched;
  let port: number;
  const killed: number[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-nats-'));
    port = await freeFixedPort();
    launched = await startLauncher({ DATA_DIR: dataDir, PORT: String(port), WA_CONNECTOR: 'sandbox', LOG_LEVEL: 'info' });
  }, 60_000);

  afterAll(async () => {
    await stopLauncher(launched);
    for (const pid of logLines(launched, 'restarted local nats-server').map((l) => l.natsPid as number)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('logs the exit with the server output, restarts it on the same port, and the gateway serves again by itself', async () => {
    const token = bannerToken(launched);
    const createInstance = (): Promise<number> =>
      fetch(`http://127.0.0.1:${port}/v1/create_instance`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5_000) }).then(
        (r) => r.status,
        () => 0,
      );
    expect(await createInstance()).toBe(200);
    const started = logLines(launched, 'started local nats-server')[0];
    const natsPid = started?.natsPid;
    expect(typeof natsPid).toBe('number');
    process.kill(natsPid as number, 'SIGKILL');
    killed.push(natsPid as number);
    // Down for a moment: the outage is real before it is repaired.
    while (alive(natsPid as number)) await sleep(50);

    const deadline = Date.now() + 45_000;
    let status = 0;
    while (Date.now() < deadline && (status = await createInstance()) !== 200) await sleep(500);
    expect(status).toBe(200);

    const exit = logLines(launched, 'local nats-server exited')[0];
    expect(exit).toMatchObject({ natsPid, signal: 'SIGKILL', code: null, output: expect.any(Array) });
    expect((exit?.output as string[]).join('\n')).toContain('Server is ready');
    // The services reconnect as soon as the new server accepts, which may be before the launcher (polling its port
    // every 50 ms) has logged the restart: the line may come a moment after the first 200 (seen once in CI).
    const restarted = await eventually(
      async () => logLines(launched, 'restarted local nats-server')[0],
      (line) => line !== undefined,
      5_000,
    );
    expect(restarted).toMatchObject({ url: started?.url, storeDir: started?.storeDir });
    expect(restarted?.natsPid).not.toBe(natsPid);
    expect(alive(restarted?.natsPid as number)).toBe(true);
  }, 60_000);

  it('stops the restarted nats-server too on Ctrl-C', async () => {
    const restartedPid = logLines(launched, 'restarted local nats-server')[0]?.natsPid as number;
    expect(await stopLauncher(launched)).toBe(0);
    expect(alive(restartedPid)).toBe(false);
  }, 30_000);
});

/** Ctrl-C in a terminal signals the whole foreground process group, not the launcher alone. */
describe('launcher stopped by Ctrl-C in a terminal (SIGINT to its process group)', () => {
  let dataDir: string;
  let launched: Launched | null = null;

  afterAll(async () => {
    if (launched) await stopLauncher(launched);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stops the services first and nats-server last: exit code 0, no warning or error from any process', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-ctrlc-'));
    const port = await freeFixedPort();
    launched = await startLauncher({ DATA_DIR: dataDir, PORT: String(port), WA_CONNECTOR: 'sandbox' }, 45_000, { ownProcessGroup: true });
    const token = bannerToken(launched);
    const pid = launched.process.pid!;
    // Work in flight for every service to finish on the way out: an instance linked on the sandbox holds a lease.
    const call = (path: string): Promise<Response> => fetch(`http://127.0.0.1:${port}/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
    const { instance_id: id } = (await (await call('/create_instance')).json()) as { instance_id: string };
    expect((await call(`/get_qrcode?instance_id=${id}`)).status).toBe(200);
    expect((await call(`/sandbox/scan?instance_id=${id}&number=4915112345678`)).status).toBe(200);
    const children = childrenOf(pid).map((c) => c.pid);
    expect(children).toHaveLength(5);
    // Only the launcher is in the group the terminal signals: every child has a group of its own.
    expect(processGroupOf(pid)).toBe(pid);
    expect(children.filter((child) => processGroupOf(child) === pid)).toEqual([]);
    const before = launched.output().length;

    process.kill(-pid, 'SIGINT');
    const code = await Promise.race([stopLauncher(launched), sleep(25_000).then(() => 'timeout' as const)]);
    const after = launched.output().slice(before);
    expect({ code, warnings: after.split('\n').filter((line) => /"level":(40|50|60)/.test(line)) }).toEqual({ code: 0, warnings: [] });
    expect(children.filter(alive)).toEqual([]);
  }, 60_000);
});
