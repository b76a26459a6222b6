import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '@wagw/lib';
import { envPositiveInt, log, stopProcess } from './common';

const ROOT = resolve(__dirname, '..');

export interface HttpResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** 50 connections for BENCH_DURATION seconds (default 10). */
const cannon = async (options: autocannon.Options): Promise<HttpResult> => {
  const result = await autocannon({ connections: 50, duration: envPositiveInt('BENCH_DURATION', 10), ...options });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
};


/** Waits for a child's stdout to match `pattern` (bounded). */
const waitForOutput = (child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> =>
  new Promise((resolvePromise, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ${String(pattern)} within ${timeoutMs} ms`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        resolvePromise(match);
      }
    });
  });

export interface HttpBenchResult {
  bareGet: HttpResult;
  createInstance: HttpResult;
  barePost: HttpResult;
  send: HttpResult;
}

/**
 * The gateway as the quickstart runs it (every service its own process, a local nats-server), beside bare
 * Fastify in its own process: GET / against create_instance, a schema-validated POST against POST /v1/send
 * (on a linked sandbox instance; acceptance = validation + gRPC + durable append).
 */
export const runHttpBench = async (): Promise<HttpBenchResult> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wagw-bench-http-'));
  const port = await freePort();
  const gateway = spawn(process.execPath, [join(ROOT, 'lib/dist/launcher/main.js')], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'error', NATS_URL: '', AUTH_JWT_SECRET: '', WA_CONNECTOR: 'sandbox' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const bare = spawn(process.execPath, ['-r', join(ROOT, 'bench/register.js'), join(ROOT, 'bench/bareServer.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const token = (await waitForOutput(gateway, /export TOKEN=(\S+)/, 60_000))[1]!;
    const barePort = (await waitForOutput(bare, /^(\d+)\n/, 20_000))[1]!;
    const base = `http://127.0.0.1:${port}/v1`;
    const headers = { authorization: `Bearer ${token}` };
    const bareUrl = `http://127.0.0.1:${barePort}`;
    await cannon({ url: `${bareUrl}/`, duration: 2 });

    log('http: bare Fastify GET /');
    const bareGet = await cannon({ url: `${bareUrl}/` });
    log('http: GET /v1/create_instance');
    const createInstance = await cannon({ url: `${base}/create_instance`, headers });

    const instanceId = ((await (await fetch(`${base}/create_instance`, { headers })).json()) as { instance_id: string }).instance_id;
    await fetch(`${base}/get_qrcode?instance_id=${instanceId}`, { headers });
    await fetch(`${base}/sandbox/scan?instance_id=${instanceId}&number=4915112345678`, { headers });
    for (let i = 0; i < 100; i++) {
      const status = (await (await fetch(`${base}/status?instance_id=${instanceId}`, { headers })).json()) as { state: string };
      if (status.state === 'connected') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const body = JSON.stringify({ instance_id: instanceId, number: '4915199999999', type: 'text', message: 'hello from the gateway benchmark, a short message body' });
    log('http: bare Fastify POST /send (schema)');
    const barePost = await cannon({ url: `${bareUrl}/send`, method: 'POST', headers: { 'content-type': 'application/json' }, body });
    log('http: POST /v1/send');
    const send = await cannon({ url: `${base}/send`, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
    return { bareGet, createInstance, barePost, send };
  } finally {
    await stopProcess(bare);
    await stopProcess(gateway);
    rmSync(dataDir, { recursive: true, force: true });
  }
};
