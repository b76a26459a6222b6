import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  ALL_MESSAGES_PATTERN,
  connectNats,
  createLogger,
  JetStreamEventStore,
  messageEvent,
  messageStream,
  type MessageAccepted,
  type NatsHandle,
} from '@wagw/lib';
import { envPositiveInt, log, pool, startBenchNats } from './common';
import { MB, sleep, withGateway, type Gateway, type MemorySample } from './sessionsGateway';

const silent = createLogger('bench', 'silent');

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
