import { createServer } from 'node:http';
import { connectNats, createLogger, instanceEvent, instanceStream, JetStreamEventStore } from '@wagw/lib';
import { envPositiveInt, log, pool, startBenchNats } from './common';
import { withGateway } from './http';

export interface ReplayBenchResult {
  pastEvents: number;
  /** WEBHOOK_REPLAY_RATE the services ran with (replayed deliveries a second at most, per replica). */
  replayRate: number;
  /** Live events offered a second, on another instance, through both phases. */
  liveOffered: number;
  liveAlone: { perSecond: number; p50Ms: number };
  liveDuringReplay: { perSecond: number; p50Ms: number };
  replayPerSecond: number;
}

const silent = createLogger('bench', 'silent');
const PHASE_MS = 5_000;
const LIVE_INSTANCES = 20;

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/**
 * Issue 13's replay row: an instance with BENCH_REPLAY_EVENTS past events (raised while its webhook was off) is
 * replayed to its webhook while 20 other instances' live events keep coming at BENCH_REPLAY_LIVE_RATE a second;
 * the live deliveries' rate and latency alone and during the replay, and the replay's rate.
 */
export const runReplayBench = async (): Promise<ReplayBenchResult> => {
  const pastEvents = envPositiveInt('BENCH_REPLAY_EVENTS', 5_000);
  const liveOffered = envPositiveInt('BENCH_REPLAY_LIVE_RATE', 500);
  const replayRate = envPositiveInt('WEBHOOK_REPLAY_RATE', 200);
  const received = { live: [] as Array<{ at: number; latency: number }>, replay: [] as number[] };
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      if (req.url === '/live') {
        const { timestamp } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
        received.live.push({ at: now, latency: now - Date.parse(timestamp) });
      } else received.replay.push(now);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const nats = await startBenchNats();
  try {
    const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_REPLAY_RATE: String(replayRate) };
    return await withGateway(
      nats,
      async ({ base, headers }) => {
        const call = async (path: string): Promise<Record<string, unknown>> =>
          (await (await fetch(`${base}${path}`, { headers })).json()) as Record<string, unknown>;
        const past = (await call('/create_instance')).instance_id as string;
        // Live events over several instances: one instance's deliveries go out one at a time, in order.
        const live: string[] = [];
        for (let i = 0; i < LIVE_INSTANCES; i++) live.push((await call('/create_instance')).instance_id as string);
        const handle = await connectNats({ url: nats.url, name: 'bench-replay', logger: silent, timeoutMs: 30_000 });
        const store = await JetStreamEventStore.open(handle);
        const reset = (instanceId: string, key: string) =>
          store.append(instanceStream(instanceId), [instanceEvent('InstanceReset', new Date().toISOString(), {})], { expectedVersion: 'any', commandId: key });
        try {
          const since = new Date(Date.now() - 1_000).toISOString();
          log(`replay: ${pastEvents} past events while the webhook is off`);
          await pool(pastEvents, 50, async (i) => void (await reset(past, `past-${i}`)));
          await call(`/set_webhook?instance_id=${past}&enable=true&webhook_url=${encodeURIComponent(`${url}/replay`)}`);
          for (const id of live) await call(`/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(`${url}/live`)}`);
          let sent = 0;
          const ticker = setInterval(() => {
            for (let i = 0; i < liveOffered / 100; i++, sent++) void reset(live[sent % LIVE_INSTANCES]!, `live-${sent}`);
          }, 10);
          try {
            const window = (from: number, to: number) => {
              const live = received.live.filter((r) => r.at >= from && r.at < to);
              return { perSecond: live.length / ((to - from) / 1000), p50Ms: median(live.map((r) => r.latency)) };
            };
            log(`replay: live events alone, ${liveOffered}/s`);
            await new Promise((resolve) => setTimeout(resolve, 1_000));
            const aloneFrom = Date.now();
            await new Promise((resolve) => setTimeout(resolve, PHASE_MS));
            const liveAlone = window(aloneFrom, Date.now());
            log('replay: GET /v1/replay_webhooks beside them');
            const started = Date.now();
            await call(`/replay_webhooks?instance_id=${past}&since=${encodeURIComponent(since)}`);
            for (let i = 0; i < 6_000 && received.replay.length < pastEvents; i++) await new Promise((resolve) => setTimeout(resolve, 50));
            const ended = Date.now();
            if (received.replay.length < pastEvents) throw new Error(`replay delivered ${received.replay.length} of ${pastEvents}`);
            return {
              pastEvents,
              replayRate,
              liveOffered,
              liveAlone,
              liveDuringReplay: window(started, ended),
              replayPerSecond: pastEvents / ((ended - started) / 1000),
            };
          } finally {
            clearInterval(ticker);
          }
        } finally {
          await handle.close();
        }
      },
      env,
    );
  } finally {
    await nats.stop();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
};
