import { randomUUID } from 'node:crypto';
import {
  connectNats,
  createLogger,
  instanceHistoryPattern,
  instanceIdFor,
  instanceStream,
  JetStreamEventStore,
  type NatsHandle,
  type NewEvent,
} from '@wagw/lib';
import { envPositiveInt, log, median, pool, startBenchNats, timed, type BenchNats } from './common';

/** Aggregates appending at once; each has at most one append in flight. */
export const AGGREGATES = 100;
const RAW_STREAM = 'RAW';
const RAW_PREFIX = 'raw';

export interface AppendBenchResult {
  commitsPerRound: number;
  rounds: { eventStore: number; raw: number }[];
  /** Medians over the rounds, per second. */
  eventStorePerSecond: number;
  rawPerSecond: number;
  ratio: number;
}

export interface ReadBenchResult {
  events: number;
  pageSize: number;
  writePerSecond: number;
  /** Events/s of each timed read, and the median. */
  pagedRuns: number[];
  pagedPerSecond: number;
  singlePageRuns: number[];
  singlePagePerSecond: number;
}

const silent = createLogger('bench', 'silent');

/** A nats-server of its own plus one connection, closed and stopped (store deleted) after `fn`. */
const withNats = async <T>(name: string, fn: (nats: NatsHandle) => Promise<T>): Promise<T> => {
  const server: BenchNats = await startBenchNats();
  let nats: NatsHandle | null = null;
  try {
    nats = await connectNats({ url: server.url, name, logger: silent, timeoutMs: 30_000 });
    return await fn(nats);
  } finally {
    await nats?.close();
    await server.stop();
  }
};

const streamMessages = async (nats: NatsHandle, stream: string): Promise<number> => (await nats.jsm.streams.info(stream)).state.messages;

/**
 * Requirement 1: commits/s of `JetStreamEventStore.append` (CAS on the expected version + command id) with 100
 * aggregates appending concurrently, beside a plain `js.publish` loop (no headers) with the same 100 in flight on a
 * stream of identical settings. Rounds alternate which side goes first; the medians are compared.
 */
export const runAppendBench = async (): Promise<AppendBenchResult> => {
  const perAggregate = Math.ceil(envPositiveInt('BENCH_APPEND_COMMITS', 20_000) / AGGREGATES);
  const rounds = envPositiveInt('BENCH_APPEND_ROUNDS', 3);
  const warmupPerAggregate = 20;
  return withNats('bench-append', async (nats) => {
    const store = await JetStreamEventStore.open(nats);
    // The raw stream copies the event store's stream settings (file storage, R1, direct get, duplicate window).
    const { config } = await nats.jsm.streams.info(store.streamName);
    await nats.jsm.streams.add({ ...config, name: RAW_STREAM, subjects: [`${RAW_PREFIX}.>`] });

    const ids = Array.from({ length: AGGREGATES }, (_, a) => instanceIdFor('bench', `append-${a}`));
    const streams = ids.map((id) => instanceStream(id));
    const subjects = ids.map((id) => `${RAW_PREFIX}.${id}.instance`);
    const versions = ids.map(() => 0);
    const occurredAt = new Date().toISOString();
    const eventFor = (a: number, n: number): NewEvent => ({
      type: 'InstanceConnected',
      schemaVersion: 1,
      occurredAt,
      data: { instance_id: ids[a]!, attempt: n },
    });
    // The body the event store stores for such a commit (lib/src/eventStore/codec.ts), so both sides move the same bytes.
    const rawBody = JSON.stringify({ events: [{ type: 'InstanceConnected', v: 1, at: occurredAt, data: { instance_id: ids[0]!, attempt: 0 } }] });

    const eventStoreRound = async (commits: number): Promise<number> => {
      const { seconds } = await timed(() =>
        Promise.all(
          streams.map(async (stream, a) => {
            for (let n = 0; n < commits; n++) {
              const expected = versions[a]!;
              const result = await store.append(stream, [eventFor(a, n)], { expectedVersion: expected, commandId: randomUUID() });
              if (result.duplicate || result.version <= expected) {
                throw new Error(`append to ${stream} at version ${expected} answered ${JSON.stringify(result)}`);
              }
              versions[a] = result.version;
            }
          }),
        ),
      );
      return (commits * AGGREGATES) / seconds;
    };
    const rawRound = async (commits: number): Promise<number> => {
      const { seconds } = await timed(() =>
        Promise.all(
          subjects.map(async (subject) => {
            for (let n = 0; n < commits; n++) await nats.js.publish(subject, rawBody);
          }),
        ),
      );
      return (commits * AGGREGATES) / seconds;
    };

    await rawRound(warmupPerAggregate);
    await eventStoreRound(warmupPerAggregate);
    const results: { eventStore: number; raw: number }[] = [];
    for (let r = 0; r < rounds; r++) {
      // Alternate the order so neither side always runs on a fresher (or fuller) server.
      let raw: number;
      let eventStore: number;
      if (r % 2 === 0) {
        raw = await rawRound(perAggregate);
        eventStore = await eventStoreRound(perAggregate);
      } else {
        eventStore = await eventStoreRound(perAggregate);
        raw = await rawRound(perAggregate);
      }
      log(`append round ${r + 1}/${rounds}: event store ${Math.round(eventStore)} commits/s, raw publish ${Math.round(raw)} msgs/s`);
      results.push({ eventStore, raw });
    }

    const expected = AGGREGATES * (warmupPerAggregate + rounds * perAggregate);
    const [stored, rawStored] = [await streamMessages(nats, store.streamName), await streamMessages(nats, RAW_STREAM)];
    if (stored !== expected || rawStored !== expected) {
      throw new Error(`expected ${expected} messages in each stream, found ${stored} (event store) and ${rawStored} (raw)`);
    }
    const eventStorePerSecond = median(results.map((r) => r.eventStore));
    const rawPerSecond = median(results.map((r) => r.raw));
    return {
      commitsPerRound: perAggregate * AGGREGATES,
      rounds: results,
      eventStorePerSecond,
      rawPerSecond,
      ratio: eventStorePerSecond / rawPerSecond,
    };
  });
};

/**
 * Requirement 2: replay for audit. One instance's history (its own stream plus its messages' streams, pattern
 * `<instance_id>.>`) holding 100,000 events is written pipelined, then read back through `readPattern` in pages of
 * 1,000 (what `/v1/history` and an audit export do), and also as one 100,000-commit page, several times each.
 */
export const runReadBench = async (): Promise<ReadBenchResult> => {
  const total = envPositiveInt('BENCH_READ_EVENTS', 100_000);
  const runs = envPositiveInt('BENCH_READ_ROUNDS', 3);
  const pageSize = 1_000;
  const messageStreams = 10_000;
  return withNats('bench-read', async (nats) => {
    const store = await JetStreamEventStore.open(nats);
    const instanceId = instanceIdFor('bench', 'audit-replay');
    const pattern = instanceHistoryPattern(instanceId);
    const types = ['MessageQueued', 'MessageSent', 'MessageDelivered', 'MessageRead'];
    const occurredAt = new Date().toISOString();

    const written = await timed(() =>
      pool(total, 1_000, async (i) => {
        const messageId = `M${String(i % messageStreams).padStart(5, '0')}`;
        const stream = i === 0 ? instanceStream(instanceId) : `${instanceId}.message.${messageId}`;
        const event: NewEvent =
          i === 0
            ? { type: 'InstanceCreated', schemaVersion: 1, occurredAt, data: { instance_id: instanceId, account: 'bench' } }
            : { type: types[i % types.length]!, schemaVersion: 1, occurredAt, data: { message_id: messageId, to: '+15551234567', attempt: i } };
        await store.append(stream, [event], { expectedVersion: 'any', commandId: `fill-${i}` });
      }),
    );
    const last = await store.version(pattern);
    if (last !== total) throw new Error(`expected the history to end at sequence ${total}, found ${last}`);
    const writePerSecond = total / written.seconds;
    log(`read bench: wrote ${total} events in ${written.seconds.toFixed(1)} s (${Math.round(writePerSecond)}/s, 1,000 in flight)`);

    const readPaged = async (): Promise<number> => {
      let from: number | null = 1;
      let events = 0;
      let previous = 0;
      for (let pages = 0; from !== null; pages++) {
        if (pages > total / pageSize + 10) throw new Error('paged read did not reach the end');
        const page = await store.readPattern(pattern, from, pageSize);
        for (const commit of page.commits) {
          if (commit.sequence <= previous) throw new Error(`commit ${commit.sequence} read after ${previous}`);
          previous = commit.sequence;
          events += commit.events.length;
        }
        from = page.nextSequence;
      }
      return events;
    };
    const readSingle = async (): Promise<number> => {
      const page = await store.readPattern(pattern, 1, total);
      if (page.nextSequence !== null) throw new Error('one-page read did not reach the end');
      return page.commits.reduce((n, c) => n + c.events.length, 0);
    };
    const measure = async (label: string, read: () => Promise<number>): Promise<number> => {
      const { value: events, seconds } = await timed(read);
      if (events !== total) throw new Error(`${label} read ${events} events, expected ${total}`);
      log(`read bench: ${label} read ${events} events in ${seconds.toFixed(2)} s (${Math.round(events / seconds)}/s)`);
      return events / seconds;
    };

    const pagedRuns: number[] = [];
    const singlePageRuns: number[] = [];
    for (let r = 0; r < runs; r++) {
      pagedRuns.push(await measure(`pages of ${pageSize}`, readPaged));
      singlePageRuns.push(await measure('one page', readSingle));
    }
    return {
      events: total,
      pageSize,
      writePerSecond,
      pagedRuns,
      pagedPerSecond: median(pagedRuns),
      singlePageRuns,
      singlePagePerSecond: median(singlePageRuns),
    };
  });
};
