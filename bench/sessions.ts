import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { Agent, request, WebSocket } from 'undici';
import {
  ALL_MESSAGES_PATTERN,
  connectNats,
  createLogger,
  freePort,
  JetStreamEventStore,
  messageEvent,
  messageStream,
  type MessageAccepted,
  type NatsHandle,
} from '@wagw/lib';
import { BENCH_RATE_LIMIT, childrenOf, envPositiveInt, log, median, pool, processInfo, startBenchNats, stopProcess } from './common';

const ROOT = resolve(__dirname, '..');
const SESSIONS_SCRIPT = join(ROOT, 'services/sessions/dist/main.js');
const silent = createLogger('bench', 'silent');
const MB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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

/** The pid of the sessions service the launcher `launcherPid` runs (its child running services/sessions/dist/main.js). */
const sessionsPid = (launcherPid: number): number => {
  const found = childrenOf(launcherPid).find((p) => p.argv.includes(SESSIONS_SCRIPT));
  if (!found) throw new Error(`no sessions service process under launcher ${launcherPid}`);
  return found.pid;
};

/** CPU seconds so far of each process taking part: the launcher's services (by name), our nats-server, this process. */
const cpuByProcess = (launcherPid: number): Map<string, number> => {
  const cpu = new Map<string, number>();
  for (const p of childrenOf(launcherPid)) {
    const name = /services\/([^/]+)\/dist\/main\.js$/.exec(p.argv.find((arg) => arg.endsWith('main.js')) ?? '')?.[1];
    if (name) cpu.set(name, p.cpuSeconds);
  }
  for (const p of childrenOf(process.pid)) if (p.comm === 'nats-server') cpu.set('nats-server', p.cpuSeconds);
  const self = processInfo(process.pid);
  if (self) cpu.set('bench', self.cpuSeconds);
  return cpu;
};

const rssBytes = (pid: number): number => {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
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
        const pid = sessionsPid(launcherPid);
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
        const session = await attach(sessionsPid(launcherPid));
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

/** Creates and links `count` sandbox instances (20 at a time): create, get_qrcode, scan, then waits for 'connected'. */
const linkInstances = async (gateway: Gateway, count: number, firstNumber: number): Promise<string[]> => {
  const ids: string[] = [];
  await pool(count, 20, async (i) => {
    const { instance_id: id } = await gateway.get<{ instance_id: string }>('/create_instance');
    await gateway.get(`/get_qrcode?instance_id=${id}`);
    await gateway.get(`/sandbox/scan?instance_id=${id}&number=4915${String(firstNumber + i).padStart(8, '0')}`);
    for (let attempt = 0; ; attempt++) {
      const { state } = await gateway.get<{ state: string }>(`/status?instance_id=${id}`);
      if (state === 'connected') break;
      if (attempt >= 100) throw new Error(`instance ${id} not connected after scanning (state ${state})`);
      await sleep(50);
    }
    ids.push(id);
  });
  return ids;
};

/**
 * The event store's commits so far and the last one's sequence. Each send ends up as 4 commits (MessageAccepted, then
 * its sent, delivered and read receipts): a cheap way to wait for a run's end. (The consumer info of the dispatcher's
 * durable would tell more, but nats-server 2.9 counts a wildcard consumer's pending messages by scanning, and polling
 * it slowed the very dispatch measured.)
 */
const commits = async (nats: NatsHandle, store: JetStreamEventStore): Promise<{ count: number; lastSequence: number }> => {
  const { state } = await nats.jsm.streams.info(store.streamName);
  return { count: state.messages, lastSequence: state.last_seq };
};

/** The MessageSent events recorded from `fromSequence` on: how many (in all, and by `by`), and when the first and the last were recorded. */
const readSent = async (
  store: JetStreamEventStore,
  fromSequence: number,
  by: number,
): Promise<{ count: number; countBy: number; first: number; last: number; times: number[] }> => {
  const times: number[] = [];
  let count = 0;
  let countBy = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  for (let from: number | null = fromSequence; from !== null;) {
    const page = await store.readPattern(ALL_MESSAGES_PATTERN, from, 10_000);
    for (const commit of page.commits) {
      for (const event of commit.events) {
        if (event.type !== 'MessageSent') continue;
        count++;
        const at = Date.parse(event.occurredAt);
        if (at <= by) countBy++;
        times.push(at);
        first = Math.min(first, at);
        last = Math.max(last, at);
      }
    }
    from = page.nextSequence;
  }
  return { count, countBy, first, last, times };
};

export interface DispatchRun {
  sends: number;
  /** Sends accepted per second (all of them, start to end). */
  acceptedPerSecond: number;
  /** Sends dispatched per second, from the first to the last MessageSent (as the sessions service recorded them). */
  dispatchedPerSecond: number;
  /** Sends without a MessageSent yet when the last one was accepted. */
  backlogAtAcceptEnd: number;
  /** From the last acceptance to the last MessageSent, ms. */
  tailMs: number;
}

/**
 * Accepts `sends` sends with `accept` (`concurrency` in flight), waits (bounded) until every one was sent and read,
 * then reads back their MessageSent events (after the run, so that reading costs the run no CPU).
 */
const measureDispatch = async (
  gateway: Gateway,
  nats: NatsHandle,
  store: JetStreamEventStore,
  sends: number,
  concurrency: number,
  accept: (n: number) => Promise<unknown>,
): Promise<DispatchRun> => {
  const before = await commits(nats, store);
  const from = before.lastSequence + 1;
  const expected = before.count + 4 * sends;
  const cpuBefore = gateway.cpu();
  const acceptStart = performance.now();
  await pool(sends, concurrency, async (n) => {
    await accept(n);
  });
  const acceptEnd = Date.now();
  const acceptSeconds = (performance.now() - acceptStart) / 1000;
  const deadline = Date.now() + 120_000;
  while ((await commits(nats, store)).count < expected && Date.now() < deadline) await sleep(100);
  const cpuAfter = gateway.cpu();
  const wall = (performance.now() - acceptStart) / 1000;
  const cpu = [...cpuAfter].map(([name, seconds]) => `${name} ${(seconds - (cpuBefore.get(name) ?? 0)).toFixed(1)}`);
  log(`sessions: CPU seconds from the first acceptance to the last read receipt (${wall.toFixed(1)} s): ${cpu.join(', ')}`);
  let sent = await readSent(store, from, acceptEnd);
  while (sent.count < sends && Date.now() < deadline) {
    await sleep(500);
    sent = await readSent(store, from, acceptEnd);
  }
  if (sent.count !== sends) throw new Error(`${sent.count} MessageSent for ${sends} sends within 120 s`);
  const perSecond: number[] = [];
  for (const at of sent.times) {
    const second = Math.floor((at - sent.first) / 1000);
    perSecond[second] = (perSecond[second] ?? 0) + 1;
  }
  const acceptedAt = ((acceptEnd - sent.first) / 1000).toFixed(1);
  log(`sessions: MessageSent per second from the first: ${Array.from(perSecond, (n) => n ?? 0).join(', ')} (accepting ended at ${acceptedAt} s)`);
  return {
    sends,
    acceptedPerSecond: sends / acceptSeconds,
    dispatchedPerSecond: sends / ((sent.last - sent.first) / 1000),
    backlogAtAcceptEnd: sends - sent.countBy,
    tailMs: sent.last - acceptEnd,
  };
};

/** Appends what POST /v1/send appends for a text message (MessagesService.accept): a MessageAccepted on a new message stream. */
const appendAccepted = (store: JetStreamEventStore, instanceId: string, n: number): Promise<unknown> => {
  const messageId = `m_${randomUUID().replace(/-/g, '')}`;
  const accepted = messageEvent<MessageAccepted>('MessageAccepted', new Date().toISOString(), {
    message_id: messageId,
    to: `4918${String(n).padStart(8, '0')}`,
    type: 'text',
    text: `bench message ${n}`,
    media_url: null,
    filename: null,
  });
  return store.append(messageStream(instanceId, messageId), [accepted], { expectedVersion: 0, commandId: `accept-${messageId}` });
};

export interface SessionsBenchResult {
  memory: {
    instances: number;
    idle: MemorySample;
    linked: MemorySample;
    /** (RSS at `instances` - RSS at 0) / instances. */
    rssPerInstance: number;
    heapPerInstance: number;
    /** Linked in all (the dispatch runs' instances). */
    allInstances: number;
    all: MemorySample;
  };
  linkSeconds: number;
  instances: number;
  /** Sends accepted by POST /v1/send (50 in flight) while the dispatcher runs. */
  http: DispatchRun;
  /** A backlog: MessageAccepted commits (what POST /v1/send appends) appended straight to JetStream, 100 in flight. */
  backlog: DispatchRun;
}

/**
 * The sessions service as the quickstart runs it (sandbox connector, pacing off), on a nats-server of the
 * benchmark's own. Memory: its RSS idle with 0 and with `BENCH_SESSIONS_MEMORY_INSTANCES` (200) linked idle
 * instances. Dispatch over `BENCH_SESSIONS_INSTANCES` (1,000) linked instances: `BENCH_SESSIONS_SENDS` (10,000) sends
 * accepted over HTTP (the dispatcher keeps up with acceptance when it can), then as many appended straight to the
 * event store, faster than HTTP accepts them, so that they queue and the dispatch rate is the dispatcher's own.
 */
export const runSessionsBench = async (): Promise<SessionsBenchResult> => {
  const memoryInstances = envPositiveInt('BENCH_SESSIONS_MEMORY_INSTANCES', 200);
  const instances = Math.max(memoryInstances, envPositiveInt('BENCH_SESSIONS_INSTANCES', 1_000));
  const sends = envPositiveInt('BENCH_SESSIONS_SENDS', 10_000);
  const server = await startBenchNats();
  try {
    const nats = await connectNats({ url: server.url, name: 'bench-sessions', logger: silent, timeoutMs: 30_000 });
    try {
      const store = await JetStreamEventStore.open(nats);
      return await withGateway(server.url, async (gateway) => {
        await sleep(3_000);
        const idle = await gateway.memory(5);
        log(`sessions: idle with 0 instances: RSS ${(idle.rss / MB).toFixed(1)} MB, heap ${(idle.heapUsed / MB).toFixed(1)} MB`);

        log(`sessions: linking ${memoryInstances} instances`);
        const linkStart = performance.now();
        const ids = await linkInstances(gateway, memoryInstances, 0);
        let linkSeconds = (performance.now() - linkStart) / 1000;
        await sleep(5_000);
        const linked = await gateway.memory(5);
        log(`sessions: idle with ${memoryInstances} linked: RSS ${(linked.rss / MB).toFixed(1)} MB, heap ${(linked.heapUsed / MB).toFixed(1)} MB`);

        log(`sessions: linking ${instances - memoryInstances} more instances`);
        const moreStart = performance.now();
        ids.push(...(await linkInstances(gateway, instances - memoryInstances, memoryInstances)));
        linkSeconds += (performance.now() - moreStart) / 1000;
        log(`sessions: ${instances} instances created and linked in ${linkSeconds.toFixed(1)} s (20 at a time)`);
        await sleep(2_000);
        const all = await gateway.memory(3);
        log(`sessions: idle with ${instances} linked: RSS ${(all.rss / MB).toFixed(1)} MB, heap ${(all.heapUsed / MB).toFixed(1)} MB`);
        gateway.doneWithMemory();

        log(`sessions: ${sends} sends over ${instances} instances by POST /v1/send, 50 in flight`);
        const http = await gateway.profiled('http', () =>
          measureDispatch(gateway, nats, store, sends, 50, (n) =>
            gateway.post('/send', {
              instance_id: ids[n % ids.length],
              number: `4917${String(n).padStart(8, '0')}`,
              type: 'text',
              message: `bench message ${n}`,
            }),
          ),
        );
        log(
          `sessions: accepted ${http.acceptedPerSecond.toFixed(0)}/s, dispatched ${http.dispatchedPerSecond.toFixed(0)}/s, ${http.backlogAtAcceptEnd} queued at the end`,
        );
        await sleep(1_000);

        log(`sessions: a backlog of ${sends} sends appended straight to the event store, 100 in flight`);
        const backlog = await gateway.profiled('backlog', () =>
          measureDispatch(gateway, nats, store, sends, 100, (n) => appendAccepted(store, ids[n % ids.length]!, n)),
        );
        log(
          `sessions: appended ${backlog.acceptedPerSecond.toFixed(0)}/s, dispatched ${backlog.dispatchedPerSecond.toFixed(0)}/s, ${backlog.backlogAtAcceptEnd} queued at the end`,
        );
        return {
          memory: {
            instances: memoryInstances,
            idle,
            linked,
            rssPerInstance: (linked.rss - idle.rss) / memoryInstances,
            heapPerInstance: (linked.heapUsed - idle.heapUsed) / memoryInstances,
            allInstances: instances,
            all,
          },
          linkSeconds,
          instances,
          http,
          backlog,
        };
      });
    } finally {
      await nats.close();
    }
  } finally {
    await server.stop();
  }
};
