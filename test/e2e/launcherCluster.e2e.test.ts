import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connectNats, freePort } from '@wagw/lib';
import { testLogger } from '../harness/logger';

const LAUNCHER = join(resolve(__dirname, '../..'), 'lib/dist/launcher/main.js');

interface Launched {
  process: ChildProcess;
  output: () => string;
}

/** `NATS_CLUSTER_SIZE=3 npm start` as a user runs it (the built launcher), until it prints its token. */
const launch = async (dataDir: string, port: number): Promise<Launched> => {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', NATS_CLUSTER_SIZE: '3', WA_CONNECTOR: 'sandbox' };
  delete env.NATS_URL;
  delete env.NATS_REPLICAS;
  delete env.AUTH_JWT_SECRET;
  const child = spawn(process.execPath, [LAUNCHER], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!output.includes('export TOKEN=') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 200));
  return { process: child, output: () => output };
};

const stop = async (launched: Launched): Promise<number | null> => {
  const exited = new Promise<number | null>((r) => launched.process.once('exit', (code) => r(code)));
  launched.process.kill('SIGINT');
  return Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 30_000).unref())]);
};

/** The quickstart with a local 3-node JetStream cluster: R3 everywhere, and a restart on the same stores. */
describe('launcher with NATS_CLUSTER_SIZE=3', () => {
  let dataDir: string;
  let port: number;
  let running: Launched | null = null;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wagw-launcher-cluster-'));
    port = await freePort();
  });

  afterAll(async () => {
    if (running && running.process.exitCode === null) running.process.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts a 3-node cluster with every stream and bucket R3, shows it in the banner, and serves the API', async () => {
    running = await launch(dataDir, port);
    const output = running.output();
    const natsUrl = /NATS: +3-node cluster, streams and buckets R3 \(nats-server [\d.]+\): (\S+)/.exec(output)?.[1];
    expect(natsUrl?.split(',')).toHaveLength(3);
    const token = /export TOKEN=(\S+)/.exec(output)?.[1];
    const created = await fetch(`http://127.0.0.1:${port}/v1/create_instance`, { headers: { authorization: `Bearer ${token}` } });
    expect(created.status).toBe(200);
    const nats = await connectNats({ url: natsUrl!, name: 'launcher-cluster-test', logger: testLogger() });
    try {
      for (const stream of ['EVENTS', 'WEBHOOKS', 'KV_session_leases', 'KV_webhook_secrets']) {
        expect([stream, (await nats.jsm.streams.info(stream)).config.num_replicas]).toEqual([stream, 3]);
      }
    } finally {
      await nats.close();
    }
    expect(await stop(running)).toBe(0);
  }, 90_000);

  it('starts again on the same stores (the services wait for the re-elected cluster) with the data kept', async () => {
    running = await launch(dataDir, port);
    const token = /export TOKEN=(\S+)/.exec(running.output())?.[1];
    expect(token).toBeDefined();
    const listed = await fetch(`http://127.0.0.1:${port}/v1/list_instances`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await listed.json()) as { instances: unknown[] }).instances).toHaveLength(1);
    expect(await stop(running)).toBe(0);
  }, 90_000);
});
