import { Agent, request } from 'node:http';
import { connectNats, createLogger, JetStreamEventStore, messageStream, newCommandId } from '@wagw/lib';
import { envPositiveInt, launchedGatewayPid, log, pool, rssBytes as rssOf, startBenchNats } from './common';
import { withGateway } from './http';

export interface EventsBenchResult {
  readers: number;
  instances: number;
  eventsPerSecond: number;
  seconds: number;
  /** Deliveries every reader got, and how many were expected (events of its instance x readers). */
  delivered: number;
  expected: number;
  p50Ms: number;
  p99Ms: number;
  /** The reference: the same events read by one ordered consumer straight from the event store. */
  storeP99Ms: number;
  /** Gateway RSS before the readers connected, with them (idle), and at the end of the flow. */
  rssIdle: number;
  rssReaders: number;
  rssEnd: number;
}

const silent = createLogger('bench', 'silent');
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/**
 * Issue 14's fan-out row: BENCH_SSE_READERS (1,000) readers of GET /v1/events on one gateway, spread over 100
 * instances, while BENCH_SSE_RATE (1,000) events/s are appended for BENCH_SSE_SECONDS (10 s): delivery latency (append
 * time to the reader's parse) and the gateway's memory per reader.
 */
export const runEventsBench = async (): Promise<EventsBenchResult> => {
  const readers = envPositiveInt('BENCH_SSE_READERS', 1_000);
  const rate = envPositiveInt('BENCH_SSE_RATE', 1_000);
  const seconds = envPositiveInt('BENCH_SSE_SECONDS', 10);
  const instances = 100;
  const nats = await startBenchNats();
  try {
    return await withGateway(nats, async ({ base, headers }) => {
      const gatewayPid = launchedGatewayPid();
      const ids: string[] = [];
      for (let i = 0; i < instances; i++)
        ids.push(((await (await fetch(`${base}/create_instance`, { headers })).json()) as { instance_id: string }).instance_id);
      const rssIdle = rssOf(gatewayPid);

      log(`events: ${readers} readers over ${instances} instances`);
      const latencies: number[] = [];
      const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
      const open: Array<() => void> = [];
      await pool(readers, 50, async (i) => {
        await new Promise<void>((resolve, reject) => {
          const req = request(`${base}/events?instance_id=${ids[i % instances]}`, { agent, headers }, (res) => {
            if (res.statusCode !== 200) return reject(new Error(`events bench: reader answered ${res.statusCode}`));
            res.setEncoding('utf8');
            let buffer = '';
            res.on('data', (chunk: string) => {
              buffer += chunk;
              let end: number;
              while ((end = buffer.indexOf('\n\n')) >= 0) {
                const block = buffer.slice(0, end);
                buffer = buffer.slice(end + 2);
                const at = block.indexOf('"timestamp":"');
                if (at >= 0) latencies.push(Date.now() - Date.parse(block.slice(at + 13, block.indexOf('"', at + 13))));
              }
            });
            resolve();
          });
          req.on('error', reject);
          req.end();
          open.push(() => req.destroy());
        });
      });
      await new Promise((r) => setTimeout(r, 1_000));
      const rssReaders = rssOf(gatewayPid);

      const handle = await connectNats({ url: nats.url, name: 'bench-events', logger: silent, timeoutMs: 30_000 });
      try {
        const store = await JetStreamEventStore.open(handle);
        const storeLatencies: number[] = [];
        const reference = await store.subscribe('>', { fromSequence: (await store.version('>')) + 1 });
        const referenceDone = (async () => {
          for await (const { commit } of reference) for (const e of commit.events) storeLatencies.push(Date.now() - Date.parse(e.occurredAt));
        })();

        log(`events: ${rate} events/s for ${seconds} s`);
        const total = rate * seconds;
        const started = performance.now();
        await pool(total, 100, async (i) => {
          // Paced: event i leaves at i / rate seconds after the start.
          const wait = started + (i * 1000) / rate - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          const occurredAt = new Date().toISOString();
          await store.append(
            messageStream(ids[i % instances]!, `B${i}`),
            [{ type: 'MessageReceived', schemaVersion: 1, occurredAt, data: { from: '4915100000000', text: `bench ${i}` } }],
            {
              expectedVersion: 'any',
              commandId: newCommandId(),
            },
          );
        });
        const expected = total * (readers / instances);
        for (let i = 0; i < 300 && latencies.length < expected; i++) await new Promise((r) => setTimeout(r, 100));
        const rssEnd = rssOf(gatewayPid);
        await reference.close();
        await referenceDone;
        open.forEach((close) => close());
        agent.destroy();
        const sorted = [...latencies].sort((a, b) => a - b);
        const storeSorted = [...storeLatencies].sort((a, b) => a - b);
        return {
          readers,
          instances,
          eventsPerSecond: total / ((performance.now() - started) / 1000),
          seconds,
          delivered: latencies.length,
          expected,
          p50Ms: percentile(sorted, 0.5),
          p99Ms: percentile(sorted, 0.99),
          storeP99Ms: percentile(storeSorted, 0.99),
          rssIdle,
          rssReaders,
          rssEnd,
        };
      } finally {
        await handle.close();
      }
    });
  } finally {
    await nats.stop();
  }
};
