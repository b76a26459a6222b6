import { Agent, request, type ClientRequest } from 'node:http';
import { connectNats, createLogger, JetStreamEventStore, messageStream, newCommandId } from '@wagw/lib';
import { envPositiveInt, launchedGatewayPid, log, pool, rssBytes, startBenchNats } from './common';
import { withGateway } from './http';

export interface StalledReadersResult {
  readers: number;
  /** Bytes of events each reader was sent (its instance's share of the flow). */
  bytesPerReader: number;
  /** SSE_MAX_BUFFER_BYTES of the gateway. */
  bufferBound: number;
  cutOff: number;
  /** Gateway RSS: before the readers, with them connected, the highest sampled during the flow, and at the end. */
  rssIdle: number;
  rssReaders: number;
  rssPeak: number;
  rssEnd: number;
}

const silent = createLogger('bench', 'silent');
const INSTANCES = 10;
const EVENT_TEXT = 'x'.repeat(16 * 1024);

const slowReaderCount = async (origin: string): Promise<number> =>
  Number(/^sse_slow_readers_total(?:{[^}]*})? (\d+)/m.exec(await (await fetch(`${origin}/metrics`)).text())?.[1] ?? 0);

/**
 * Issue 14: readers that never read. BENCH_STALLED_READERS (50) `GET /v1/events` readers over 10 instances pause
 * their sockets right after the headers, while BENCH_STALLED_MB (100) MB of 16 KB inbound texts are appended: each
 * reader is sent ten times the gateway's 1 MiB buffer bound. Reports how many the gateway cut off and its RSS,
 * sampled every 100 ms: without the bound it would hold every reader's share.
 */
export const runStalledReadersBench = async (): Promise<StalledReadersResult> => {
  const readers = envPositiveInt('BENCH_STALLED_READERS', 50);
  const megabytes = envPositiveInt('BENCH_STALLED_MB', 100);
  const bufferBound = 1024 * 1024;
  const events = Math.ceil((megabytes * 1e6) / EVENT_TEXT.length);
  const nats = await startBenchNats();
  try {
    return await withGateway(
      nats,
      async ({ base, headers }) => {
        const origin = base.replace(/\/v1$/, '');
        const gatewayPid = launchedGatewayPid();
        const ids: string[] = [];
        for (let i = 0; i < INSTANCES; i++)
          ids.push(((await (await fetch(`${base}/create_instance`, { headers })).json()) as { instance_id: string }).instance_id);
        const rssIdle = rssBytes(gatewayPid);
        const cutOffBefore = await slowReaderCount(origin);

        log(`events: ${readers} readers that never read, ${megabytes} MB of events`);
        const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
        const requests: ClientRequest[] = [];
        await pool(readers, 25, async (i) => {
          await new Promise<void>((resolve, reject) => {
            const req = request(`${base}/events?instance_id=${ids[i % INSTANCES]}`, { agent, headers }, (res) => {
              if (res.statusCode !== 200) return reject(new Error(`stalled readers bench: reader answered ${res.statusCode}`));
              // Never read: the socket's receive buffer fills, then the gateway's send buffer.
              res.pause();
              resolve();
            });
            req.on('error', () => undefined);
            req.end();
            requests.push(req);
          });
        });
        await new Promise((r) => setTimeout(r, 1_000));
        const rssReaders = rssBytes(gatewayPid);

        let rssPeak = rssReaders;
        const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssBytes(gatewayPid))), 100);
        const handle = await connectNats({ url: nats.url, name: 'bench-stalled', logger: silent, timeoutMs: 30_000 });
        try {
          const store = await JetStreamEventStore.open(handle);
          const occurredAt = new Date().toISOString();
          await pool(events, 50, async (i) => {
            await store.append(
              messageStream(ids[i % INSTANCES]!, `S${i}`),
              [{ type: 'MessageReceived', schemaVersion: 1, occurredAt, data: { from: '4915100000000', text: EVENT_TEXT } }],
              { expectedVersion: 'any', commandId: newCommandId() },
            );
          });
          let cutOff = 0;
          for (let i = 0; i < 600 && cutOff < readers; i++) {
            await new Promise((r) => setTimeout(r, 100));
            cutOff = (await slowReaderCount(origin)) - cutOffBefore;
          }
          await new Promise((r) => setTimeout(r, 1_000));
          clearInterval(sampler);
          const rssEnd = rssBytes(gatewayPid);
          requests.forEach((req) => req.destroy());
          agent.destroy();
          return { readers, bytesPerReader: (events / INSTANCES) * EVENT_TEXT.length, bufferBound, cutOff, rssIdle, rssReaders, rssPeak, rssEnd };
        } finally {
          clearInterval(sampler);
          await handle.close();
        }
      },
      { SSE_MAX_BUFFER_BYTES: String(bufferBound) },
    );
  } finally {
    await nats.stop();
  }
};
