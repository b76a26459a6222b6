import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { Agent, request, WebSocket } from 'undici';
import { freePort } from '@wagw/lib';
import { BENCH_RATE_LIMIT, childrenOf, log, median, processInfo, rssBytes, servicePid, servicesCpuSeconds, stopProcess } from './common';

/*
 * The sessions and Baileys benches' gateway: the quickstart launcher on the bench's nats-server, with the sessions
 * process's memory sampled (RSS, and heap after a full GC through its inspector) and every process's CPU.
 */
const ROOT = resolve(__dirname, '..');
export const MB = 1024 * 1024;
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits for what `stream` prints from now on to match `pattern` (bounded). */
const waitForOutput = (stream: Readable | null, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> =>
  new Promise((resolvePromise, reject) => {
    let out = '';
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        stream?.off('data', onData);
        resolvePromise(match);
      }
    };
    const timer = setTimeout(() => {
      stream?.off('data', onData);
      reject(new Error(`no ${String(pattern)} within ${timeoutMs} ms`));
    }, timeoutMs);
    stream?.on('data', onData);
  });

/** CPU seconds so far of each process taking part: the launcher's services (by name), our nats-server, this process. */
const cpuByProcess = (launcherPid: number): Map<string, number> => {
  const cpu = new Map<string, number>(Object.entries(servicesCpuSeconds(launcherPid)));
  for (const p of childrenOf(process.pid)) if (p.comm === 'nats-server') cpu.set('nats-server', p.cpuSeconds);
  const self = processInfo(process.pid);
  if (self) cpu.set('bench', self.cpuSeconds);
  return cpu;
};

export interface MemorySample {
  /** VmRSS of the sessions process. */
  rss: number;
  /** V8 heap in use (process.memoryUsage().heapUsed), after the full GC that precedes each sample. */
  heapUsed: number;
}

/**
 * A DevTools protocol session with the sessions process, to collect its garbage before a sample and read its heap:
 * SIGUSR1 opens its inspector on the loopback port NODE_OPTIONS=--inspect-port=127.0.0.1:0 lets the kernel choose,
 * announced on its stderr (which the launcher shares).
 */
interface Inspector {
  gcThenHeapUsed(): Promise<number>;
  /** Runs `fn` under the CPU profiler; returns the profile (the .cpuprofile format). */
  profile(fn: () => Promise<void>): Promise<unknown>;
  close(): void;
}

/** Opens the inspector of process `pid` (once per process); answers its WebSocket address. */
const activateInspector = async (pid: number, stderr: Readable | null): Promise<string> => {
  const announced = waitForOutput(stderr, /Debugger listening on (ws:\/\/\S+)/, 10_000);
  process.kill(pid, 'SIGUSR1');
  return (await announced)[1]!;
};

const connectInspector = async (url: string): Promise<Inspector> => {
  const socket = new WebSocket(url);
  await new Promise<void>((resolvePromise, reject) => {
    socket.addEventListener('open', () => resolvePromise(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)), { once: true });
  });
  let nextId = 1;
  const waiting = new Map<number, (reply: { result?: unknown; error?: { message: string } }) => void>();
  socket.addEventListener('message', (event) => {
    const reply = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (reply.id !== undefined) waiting.get(reply.id)?.(reply);
  });
  const call = (method: string, params: Record<string, unknown> = {}): Promise<unknown> =>
    new Promise((resolvePromise, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`inspector: no answer to ${method}`)), 30_000);
      waiting.set(id, (reply) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (reply.error) reject(new Error(`inspector: ${method}: ${reply.error.message}`));
        else resolvePromise(reply.result);
      });
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    gcThenHeapUsed: async () => {
      await call('HeapProfiler.collectGarbage');
      const result = (await call('Runtime.evaluate', { expression: 'process.memoryUsage().heapUsed', returnByValue: true })) as { result: { value: number } };
      return result.result.value;
    },
    profile: async (fn) => {
      await call('Profiler.enable');
      await call('Profiler.start');
      try {
        await fn();
      } catch (error) {
        await call('Profiler.stop').catch(() => undefined);
        throw error;
      }
      return ((await call('Profiler.stop')) as { profile: unknown }).profile;
    },
    close: () => socket.close(),
  };
};

/** A gateway run by the quickstart launcher on the benchmark's nats-server, and an HTTP client for its API. */
export interface Gateway {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
  /** Medians of `samples` samples (500 ms apart, each after a full GC) of the sessions service's RSS and heap. */
  memory(samples: number): Promise<MemorySample>;
  /** Detaches from the sessions process's inspector (opened by the first `memory`). */
  doneWithMemory(): void;
  /** Runs `fn`; with BENCH_CPU_PROF set, under the sessions process's CPU profiler (to /tmp/prof/sessions-<name>.cpuprofile). */
  profiled<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** CPU seconds so far of each process taking part (see cpuByProcess). */
  cpu(): Map<string, number>;
}

/** Lines the inspector prints on the sessions service's stderr, not passed on. */
const INSPECTOR_NOISE = /^(Debugger listening on|For help, see:|Debugger attached|Debugger ending)/;

/** Runs `fn` with a gateway (sandbox connector, pacing off; `env` overrides) launched on `natsUrl`. */
export const withGateway = async <T>(natsUrl: string, fn: (gateway: Gateway) => Promise<T>, env: Record<string, string> = {}): Promise<T> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wagw-bench-sessions-'));
  const port = await freePort();
  const launcher = spawn(process.execPath, [join(ROOT, 'lib/dist/launcher/main.js')], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'error',
      NATS_URL: natsUrl,
      AUTH_JWT_SECRET: '',
      WA_CONNECTOR: 'sandbox',
      SEND_PACING_MS: '0',
      // The bench creates hundreds of instances on one account.
      INSTANCE_QUOTA: '0',
      TYPING_MS_PER_CHAR: '0',
      ...BENCH_RATE_LIMIT,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect-port=127.0.0.1:0`.trim(),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let partial = '';
  launcher.stderr.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (!INSPECTOR_NOISE.test(line)) process.stderr.write(`${line}\n`);
  });
  const agent = new Agent({ connections: 64 });
  let inspectorUrl: string | null = null;
  let inspector = null as Inspector | null;
  const attach = async (pid: number): Promise<Inspector> => {
    inspectorUrl ??= await activateInspector(pid, launcher.stderr);
    inspector ??= await connectInspector(inspectorUrl);
    return inspector;
  };
  try {
    const token = (await waitForOutput(launcher.stdout, /export TOKEN=(\S+)/, 60_000))[1]!;
    // From here on the launcher's stdout holds only the services' logs (errors, at LOG_LEVEL=error).
    launcher.stdout.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    const base = `http://127.0.0.1:${port}/v1`;
    const headers = { authorization: `Bearer ${token}` };
    const call = async <R>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<R> => {
      const res = await request(`${base}${path}`, {
        method,
        dispatcher: agent,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
      return JSON.parse(text) as R;
    };
    const launcherPid = launcher.pid!;
    return await fn({
      get: (path) => call('GET', path),
      post: (path, body) => call('POST', path, body),
      memory: async (samples) => {
        const pid = servicePid(launcherPid, 'sessions');
        const session = await attach(pid);
        const rss: number[] = [];
        const heap: number[] = [];
        for (let i = 0; i < samples; i++) {
          heap.push(await session.gcThenHeapUsed());
          await sleep(500);
          rss.push(rssBytes(pid));
        }
        return { rss: median(rss), heapUsed: median(heap) };
      },
      doneWithMemory: () => {
        inspector?.close();
        inspector = null;
      },
      profiled: async (name, fn) => {
        if (!process.env.BENCH_CPU_PROF) return fn();
        const session = await attach(servicePid(launcherPid, 'sessions'));
        let value: Awaited<ReturnType<typeof fn>> | undefined;
        const profile = await session.profile(async () => {
          value = await fn();
        });
        const file = join('/tmp/prof', `sessions-${name}.cpuprofile`);
        mkdirSync('/tmp/prof', { recursive: true });
        writeFileSync(file, JSON.stringify(profile));
        log(`sessions: CPU profile of the sessions service written to ${file}`);
        return value!;
      },
      cpu: () => cpuByProcess(launcherPid),
    });
  } finally {
    inspector?.close();
    await agent.close();
    await stopProcess(launcher);
    rmSync(dataDir, { recursive: true, force: true });
  }
};
