import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { environment, fmtInt, fmtRatio, log, markdownTable, type ResultRow } from './common';
import { runBaileysBench } from './baileys';
import { clusterRows } from './cluster';
import { runAppendBench, runReadBench } from './eventStore';
import { runEventsBench } from './events';
import { runStalledReadersBench } from './stalledReaders';
import { runHistoryBench } from './history';
import { runReplayBench } from './replay';
import { runSealingBench } from './sealing';
import { fmtCpu, fmtHttp as http, runHttpBench } from './http';
import { runSessionsBench, type DispatchRun } from './sessions';
import { runStartupBench } from './startup';
import { benchWebhookLatency, benchWebhookThroughput } from './webhooks';

/** `npm run bench`: every benchmark, each beside a baseline measured in the same run; prints a Markdown table. */
/** BENCH_ONLY=http (or eventstore, history, events, webhooks, cluster, sessions, baileys, startup) runs one group. */
const GROUPS = ['eventstore', 'http', 'history', 'events', 'webhooks', 'cluster', 'sessions', 'baileys', 'startup'];
const only = process.env.BENCH_ONLY || undefined;
const wanted = (group: string): boolean => !only || only === group;

const main = async (): Promise<void> => {
  // A misspelt group would otherwise run nothing and print an empty table.
  if (only && !GROUPS.includes(only)) throw new Error(`BENCH_ONLY must be one of ${GROUPS.join(', ')} (got "${only}")`);
  const rows: ResultRow[] = [];
  if (wanted('eventstore')) await eventStoreRows(rows);
  if (wanted('http')) await httpRows(rows);
  if (wanted('history')) await historyRows(rows);
  if (wanted('events')) await eventsRows(rows);
  if (wanted('webhooks')) await webhookRows(rows);
  if (wanted('cluster')) await clusterRows(rows);
  if (wanted('sessions')) await sessionsRows(rows);
  if (wanted('baileys')) await baileysRows(rows);
  if (wanted('startup')) await startupRows(rows);
  const table = `${environment()}\n\n${markdownTable(rows)}\n`;
  process.stdout.write(`\n${table}`);
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest.md'), table);
  log(`written to ${join(dir, 'latest.md')}`);
};

const startupRows = async (rows: ResultRow[]): Promise<void> => {
  const s = await runStartupBench();
  for (const run of s.runs) {
    rows.push({
      benchmark: `${run.service} service start-up to ready, ${fmtInt(s.events)} events in the log (${fmtInt(s.instances)} instances), from its checkpoint`,
      result: `${run.checkpointSeconds.toFixed(2)} s (RSS ${fmtInt(run.rssMiB[1])} MiB)`,
      reference: `folding the whole log: ${run.foldSeconds.toFixed(2)} s (RSS ${fmtInt(run.rssMiB[0])} MiB)`,
      ratio: fmtRatio(run.checkpointSeconds / run.foldSeconds),
      target: '<= 5 s',
      met: run.checkpointSeconds <= 5,
    });
  }
};

const eventStoreRows = async (rows: ResultRow[]): Promise<void> => {
  const append = await runAppendBench();
  rows.push({
    benchmark: 'Event store append, 100 aggregates concurrently (CAS + command id)',
    result: `${fmtInt(append.eventStorePerSecond)} commits/s`,
    reference: `raw JetStream publish, 100 in flight: ${fmtInt(append.rawPerSecond)} msgs/s`,
    ratio: fmtRatio(append.ratio),
    target: '>= 0.8',
    met: append.ratio >= 0.8,
  });
  const read = await runReadBench();
  rows.push({
    benchmark: `Read back a ${fmtInt(read.events)}-event stream (one instance's whole history, one read)`,
    result: `${fmtInt(read.singlePagePerSecond)} events/s`,
    reference: `write: ${fmtInt(read.writePerSecond)} events/s`,
    ratio: '',
    target: '>= 50,000 events/s',
    met: read.singlePagePerSecond >= 50_000,
  });
  rows.push({
    benchmark: `Same history in pages of ${read.pageSize} (what /v1/history does)`,
    result: `${fmtInt(read.pagedPerSecond)} events/s`,
    reference: '',
    ratio: '',
    target: 'report',
    met: null,
  });
};

const historyRows = async (rows: ResultRow[]): Promise<void> => {
  const h = await runHistoryBench();
  const reference = `the event store itself, pages of 1000: ${fmtInt(h.storePerSecond)} events/s`;
  rows.push({
    benchmark: `GET /v1/history, pages of 1000 following next_cursor, over a ${fmtInt(h.events)}-event history`,
    result: `${fmtInt(h.pagedPerSecond)} events/s`,
    reference,
    ratio: fmtRatio(h.pagedPerSecond / h.storePerSecond),
    target: '>= 50,000 events/s',
    met: h.pagedPerSecond >= 50_000,
  });
  rows.push({
    benchmark: `GET /v1/history/export (NDJSON), the same history`,
    result: `${fmtInt(h.exportPerSecond)} events/s`,
    reference,
    ratio: fmtRatio(h.exportPerSecond / h.storePerSecond),
    target: '>= 50,000 events/s',
    met: h.exportPerSecond >= 50_000,
  });
  const r = await runReplayBench();
  rows.push({
    benchmark: `GET /v1/replay_webhooks: ${fmtInt(r.pastEvents)} past events replayed (WEBHOOK_REPLAY_RATE=${r.replayRate}) while 20 other instances' live events come at ${fmtInt(r.liveOffered)}/s`,
    result: `replay ${fmtInt(r.replayPerSecond)} deliveries/s; live during it ${fmtInt(r.liveDuringReplay.perSecond)}/s, p50 ${fmtInt(r.liveDuringReplay.p50Ms)} ms`,
    reference: `live alone: ${fmtInt(r.liveAlone.perSecond)}/s, p50 ${fmtInt(r.liveAlone.p50Ms)} ms`,
    ratio: fmtRatio(r.liveDuringReplay.perSecond / r.liveAlone.perSecond),
    target: 'live rate kept (report)',
    met: null,
  });
};

const httpRows = async (rows: ResultRow[]): Promise<void> => {
  const h = await runHttpBench();
  rows.push({
    benchmark: `Bare Fastify POST appending one JetStream message per request (the durable floor), 50 connections, median of ${h.rounds} rounds alternating with send's`,
    result: http(h.floor),
    reference: `bare Fastify GET: ${http(h.bareGet)}`,
    ratio: fmtRatio(h.floor.requestsPerSecond / h.bareGet.requestsPerSecond),
    target: 'report',
    met: null,
  });
  const createRatio = h.createInstance.requestsPerSecond / h.floor.requestsPerSecond;
  rows.push({
    benchmark: 'GET /v1/create_instance, 50 connections',
    result: http(h.createInstance),
    reference: `the JetStream floor: ${fmtInt(h.floor.requestsPerSecond)} req/s`,
    ratio: fmtRatio(createRatio),
    target: '>= 0.5 of the floor',
    met: createRatio >= 0.5,
  });
  const sendRatio = h.send.requestsPerSecond / h.floor.requestsPerSecond;
  rows.push({
    benchmark: `POST /v1/send acceptance (durable), 50 connections, median of ${h.rounds} rounds alternating with the floor's`,
    result: http(h.send),
    reference: `the JetStream floor: ${fmtInt(h.floor.requestsPerSecond)} req/s; bare Fastify schema POST: ${http(h.barePost)}`,
    ratio: fmtRatio(sendRatio),
    target: '>= 0.8 of the floor',
    met: sendRatio >= 0.8,
  });
  rows.push({
    benchmark: 'CPU per request, µs, by process (the median rounds of the floor and of send; 2 cores are shared by all)',
    result: `send: ${fmtCpu(h.sendCpu)}`,
    reference: `floor: ${fmtCpu(h.floorCpu)}`,
    ratio: fmtRatio(Object.values(h.sendCpu).reduce((a, b) => a + b, 0) / Object.values(h.floorCpu).reduce((a, b) => a + b, 0)),
    target: 'report',
    met: null,
  });
  const limiterCost = 1 - h.sendLimited.requestsPerSecond / h.sendNoLimiter.requestsPerSecond;
  rows.push({
    benchmark: `The rate limiter's cost on POST /v1/send (fresh gateways with and without it, ${h.limiterRounds} alternating rounds, medians)`,
    result: `${(limiterCost * 100).toFixed(1)} % (${fmtInt(h.sendLimited.requestsPerSecond)} vs ${fmtInt(h.sendNoLimiter.requestsPerSecond)} req/s)`,
    reference: `without the limiter: ${http(h.sendNoLimiter)}`,
    ratio: fmtRatio(h.sendLimited.requestsPerSecond / h.sendNoLimiter.requestsPerSecond),
    target: '<= 10 %',
    met: limiterCost <= 0.1,
  });
  const s = await runSealingBench();
  rows.push({
    benchmark: "Sealing a send's content (AES-256-GCM, erasure): one MessageAccepted (200-character text) appended, in process, in-memory store",
    result: `${s.sealedMicros.toFixed(1)} µs CPU per append sealed; read back opened ${s.openedReadMicros.toFixed(1)} µs`,
    reference: `plain: ${s.plainMicros.toFixed(1)} µs per append; read back ${s.plainReadMicros.toFixed(1)} µs`,
    ratio: fmtRatio(s.sealedMicros / s.plainMicros),
    target: 'report (the added µs against the send row above)',
    met: null,
  });
};

const webhookRows = async (rows: ResultRow[]): Promise<void> => {
  for (const replicas of [1, 2]) {
    const throughput = await benchWebhookThroughput(replicas);
    rows.push({
      benchmark: `Webhook deliveries, ${fmtInt(throughput.events)}-event backlog over 100 instances, ${replicas} webhooks replica${replicas > 1 ? 's' : ''}`,
      result: `${fmtInt(throughput.deliveriesPerSecond)} deliveries/s; CPU per delivery: webhooks ${fmtInt(throughput.cpuMicrosPerDelivery)} µs, nats-server ${fmtInt(throughput.natsMicrosPerDelivery)} µs, receiver ${fmtInt(throughput.receiverMicrosPerDelivery)} µs`,
      reference: `plain keep-alive POSTs to the same receiver: ${fmtInt(throughput.rawPostsPerSecond)}/s`,
      ratio: fmtRatio(throughput.ratio),
      target: replicas === 1 ? '>= 5,000 deliveries/s' : 'report',
      met: replicas === 1 ? throughput.deliveriesPerSecond >= 5_000 : null,
    });
  }
  const latency = await benchWebhookLatency();
  rows.push({
    benchmark: `Webhook event-to-delivery latency at ${fmtInt(latency.rate)} events/s`,
    result: `p50 ${latency.p50} ms, p99 ${latency.p99} ms (${fmtInt(latency.delivered)} delivered)`,
    reference: '',
    ratio: '',
    target: 'p99 <= 100 ms',
    met: latency.p99 <= 100,
  });
};

const kb = (bytes: number): string => `${fmtInt(bytes / 1024)} KB`;
const mb = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

const sessionsRows = async (rows: ResultRow[]): Promise<void> => {
  const s = await runSessionsBench();
  const { http: h, backlog: b } = s;
  // The dispatcher kept up when (nearly) nothing was left to send as the last send was accepted.
  const keptUp = (run: DispatchRun): boolean => run.backlogAtAcceptEnd <= run.sends * 0.05;
  const queued = (run: DispatchRun): string =>
    keptUp(run)
      ? `kept up with acceptance (${fmtInt(run.backlogAtAcceptEnd)} left at its end), so bounded by it`
      : `${fmtInt(run.backlogAtAcceptEnd)} queued when acceptance ended, last sent ${fmtInt(run.tailMs)} ms later`;
  rows.push({
    benchmark: `Sandbox dispatch, pacing off: ${fmtInt(h.sends)} sends by POST /v1/send over ${fmtInt(s.instances)} linked instances`,
    result: `${fmtInt(h.dispatchedPerSecond)} messages/s (first to last MessageSent); ${queued(h)}`,
    reference: `POST /v1/send acceptance, 50 in flight: ${fmtInt(h.acceptedPerSecond)} req/s`,
    ratio: fmtRatio(h.dispatchedPerSecond / h.acceptedPerSecond),
    // Sends that never queued measure acceptance, not dispatch: the target is for queued sends (next row).
    target: keptUp(h) ? '>= 2,000 messages/s: n/a, bounded by acceptance' : '>= 2,000 messages/s',
    met: keptUp(h) ? null : h.dispatchedPerSecond >= 2_000,
  });
  rows.push({
    benchmark: `Same, a queued backlog: ${fmtInt(b.sends)} MessageAccepted appended straight to the event store`,
    result: `${fmtInt(b.dispatchedPerSecond)} messages/s (first to last MessageSent); ${queued(b)}`,
    reference: `appends, 100 in flight: ${fmtInt(b.acceptedPerSecond)}/s`,
    ratio: fmtRatio(b.dispatchedPerSecond / b.acceptedPerSecond),
    target: '>= 2,000 messages/s',
    met: b.dispatchedPerSecond >= 2_000,
  });
  const m = s.memory;
  const more = m.allInstances - m.instances;
  rows.push({
    benchmark: `Sessions service memory per idle linked sandbox instance: (RSS at ${fmtInt(m.instances)} - RSS at 0) / ${fmtInt(m.instances)}`,
    result:
      `${kb(m.rssPerInstance)} RSS/instance (heap after a full GC: ${kb(m.heapPerInstance)}); RSS ${mb(m.linked.rss)} at ${fmtInt(m.instances)}` +
      (more > 0 ? `, ${mb(m.all.rss)} at ${fmtInt(m.allInstances)} (${kb((m.all.rss - m.linked.rss) / more)}/instance past ${fmtInt(m.instances)})` : ''),
    reference: `idle with 0 instances: RSS ${mb(m.idle.rss)}, heap ${mb(m.idle.heapUsed)}`,
    ratio: '',
    target: 'report',
    met: null,
  });
};

const eventsRows = async (rows: ResultRow[]): Promise<void> => {
  const e = await runEventsBench();
  const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
  rows.push({
    benchmark: `Live events fan-out: ${fmtInt(e.readers)} SSE readers on one gateway (over ${e.instances} instances), ${fmtInt(e.eventsPerSecond)} events/s for ${e.seconds} s`,
    result: `latency p50 ${e.p50Ms} ms, p99 ${e.p99Ms} ms; ${fmtInt(e.delivered)} of ${fmtInt(e.expected)} deliveries; gateway memory ${fmtInt((e.rssReaders - e.rssIdle) / e.readers / 1024)} KB RSS/reader (RSS ${mb(e.rssIdle)} idle, ${mb(e.rssReaders)} with the readers, ${mb(e.rssEnd)} after the flow)`,
    reference: `one ordered consumer on the event store: p99 ${e.storeP99Ms} ms`,
    ratio: '',
    target: 'report',
    met: null,
  });
  const stalled = await runStalledReadersBench();
  rows.push({
    benchmark: `Live events, readers that never read: ${fmtInt(stalled.readers)} stalled SSE readers, each sent ${mb(stalled.bytesPerReader)} of events (SSE_MAX_BUFFER_BYTES ${mb(stalled.bufferBound)})`,
    result: `${fmtInt(stalled.cutOff)} of ${fmtInt(stalled.readers)} cut off with a slow_reader end event; gateway RSS ${mb(stalled.rssReaders)} with the readers, peak ${mb(stalled.rssPeak)} during the flow (${mb((stalled.rssPeak - stalled.rssReaders) / stalled.readers)} per reader), ${mb(stalled.rssEnd)} after`,
    reference: `unbounded, the gateway would hold ${mb(stalled.readers * stalled.bytesPerReader)}; idle RSS ${mb(stalled.rssIdle)}`,
    ratio: fmtRatio((stalled.rssPeak - stalled.rssReaders) / (stalled.readers * stalled.bytesPerReader)),
    target: 'memory flat (report)',
    met: null,
  });
};

const baileysRows = async (rows: ResultRow[]): Promise<void> => {
  const b = await runBaileysBench();
  // Issue 16: an idle linked instance costs at most 1 MB (it was 10 MB before Baileys 7).
  const limit = 1024 * 1024;
  rows.push({
    benchmark: `Sessions service memory per idle linked Baileys instance over the WhatsApp Web emulator: (RSS at ${fmtInt(b.instances)} - RSS at 0) / ${fmtInt(b.instances)}`,
    result: `${mb(b.rssPerInstance)} RSS/instance (heap after a full GC: ${kb(b.heapPerInstance)}); RSS ${mb(b.linked.rss)} at ${fmtInt(b.instances)}; linked in ${b.linkSeconds.toFixed(1)} s`,
    reference: `idle with 0 instances: RSS ${mb(b.idle.rss)}, heap ${mb(b.idle.heapUsed)}; WAHA publishes ~80 MB per Baileys session`,
    ratio: fmtRatio(b.rssPerInstance / limit),
    target: '<= 1 MB per instance',
    met: b.rssPerInstance <= limit,
  });
  rows.push({
    benchmark: `Sessions service CPU at idle with ${fmtInt(b.instances)} linked Baileys instances (${b.cpuWindowSeconds} s window, keep-alives included)`,
    result: `${b.linkedCpuPercent.toFixed(2)} % of one core`,
    reference: `with 0 instances: ${b.idleCpuPercent.toFixed(2)} %`,
    ratio: '',
    target: 'report',
    met: null,
  });
};

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
