import type { DrillOptions, DrillService, DrillTarget } from './drill';
import {
  checkConnections,
  checkHistory,
  checkSends,
  checkWebhooks,
  describeStuckInstance,
  expectedWebhookIds,
  receiptsMayBeLost,
  takeoverMs,
  type DrillInstance,
  type HistoryEvent,
  type Kill,
} from './checks';
import { DrillHttp } from './http';
import { killEventsLeader, recoveryFailures, type LeaderKillOutcome } from './leaderKill';
import { Load, longestGapWithoutAcceptance } from './load';
import { NatsObserver } from './observe';

export const DEFAULT_DRILL_OPTIONS: DrillOptions = {
  instances: 4,
  sendEveryMs: 150,
  warmupMs: 3_000,
  betweenKillsMs: 2_500,
  afterRestartsMs: 4_000,
  recoveryWaitMs: 20_000,
  convergeTimeoutMs: 60_000,
  receiptGraceMs: 2_000,
};

export interface DrillReport {
  kind: string;
  /** When the load started (ISO): every `atMs` below counts from it. */
  startedAt: string;
  ok: boolean;
  failures: string[];
  eventsReplicas: number;
  instances: number;
  loadMs: number;
  sends: { keys: number; accepted: number; attempts: number; neverAccepted: number };
  requests: { total: number; ok: number; unavailable503: number; slowest503Ms: number; hangs: number; bad: number };
  leaderKill: LeaderKillOutcome;
  longestGapWithoutAcceptedSendMs: number;
  longestGapStartsAtMs: number;
  webhooks: { expected: number; received: number; repeats: number };
  history: { events: number; lackingReceipts: number };
  connections: number;
  /** The longest an instance whose sessions replica was killed stayed without a connection (lease TTL + claim sweep). */
  sessionsTakeoverMs: number | null;
  timeline: Array<{ atMs: number; what: string }>;
  convergedAfterMs: number | null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Runs the drill against a deployment (see the contract in drill.ts): links instances with webhooks, puts a steady
 * load of sends on them, SIGKILLs the EVENTS leader's NATS node, then one replica each of sessions, webhooks and
 * instances, restarts them all, and checks what came out. Never throws for a failed check: the report says it.
 */
export const runDrill = async (target: DrillTarget, overrides: Partial<DrillOptions> = {}): Promise<DrillReport> => {
  const o = { ...DEFAULT_DRILL_OPTIONS, ...overrides };
  const log = (line: string): void => target.log?.(line);
  const runId = `d${Date.now().toString(36)}`;
  const token = target.token('drill');
  const http = new DrillHttp(target.gatewayUrl, () => token);
  const nats = await NatsObserver.connect(target.natsUrl);
  try {
    const failures: string[] = [];
    const eventsReplicas = await nats.eventsReplicas();
    if (eventsReplicas < 3) failures.push(`the EVENTS stream has ${eventsReplicas} replica(s): a NATS node's death takes it down (NATS_REPLICAS not applied)`);
    const instances = await Promise.all(Array.from({ length: o.instances }, (_, i) => linkInstance(http, target, `/drill/${runId}/i${i}`)));
    log(`linked ${instances.length} instances`);

    const load = new Load(
      http,
      instances.map((i) => i.id),
      { sendEveryMs: o.sendEveryMs, retryPauseMs: 250, maxAttempts: 80, retryForMs: 30_000, maxSendsPerInstance: 2_000, readEveryMs: 300 },
      runId,
    );
    const t0 = Date.now();
    const timeline: DrillReport['timeline'] = [];
    const mark = (what: string): void => {
      timeline.push({ atMs: Date.now() - t0, what });
      log(`+${Date.now() - t0} ms: ${what}`);
    };
    load.start();
    await sleep(o.warmupMs);

    const leaderKill = await killEventsLeader(target, nats, load, o.recoveryWaitMs, mark);
    await sleep(o.betweenKillsMs);
    await target.restartNatsNode(leaderKill.node);
    mark(`NATS ${leaderKill.node} restarted`);
    await sleep(o.betweenKillsMs);

    const kills: Kill[] = [];
    const victims: Array<[DrillService, string]> = [
      ['sessions', await busiest(target, nats, 'sessions')],
      ['webhooks', await busiest(target, nats, 'webhooks')],
      ['instances', (await target.replicas('instances'))[0]!],
    ];
    for (const [service, id] of victims) {
      await target.killReplica(service, id);
      kills.push({ service, id, at: Date.now() });
      mark(`SIGKILL ${service} ${id}`);
      await sleep(o.betweenKillsMs);
    }
    for (const [service, id] of victims) {
      await target.restartReplica(service, id);
      mark(`${service} ${id} restarted`);
    }
    await sleep(o.afterRestartsMs);
    mark('load stops');
    await load.stop();
    const loadEnd = Date.now();
    mark('last send answered');

    // Read back until everything accepted went out and every webhook arrived (bounded), then judge the last read.
    const convergeStart = Date.now();
    let convergedAfterMs: number | null = null;
    let state = await readBack(http, nats, instances, load, target, kills, o.receiptGraceMs, t0);
    while (!state.converged && Date.now() < convergeStart + o.convergeTimeoutMs) {
      await sleep(2_000);
      state = await readBack(http, nats, instances, load, target, kills, o.receiptGraceMs, t0);
    }
    if (state.converged) convergedAfterMs = Date.now() - convergeStart;
    mark(state.converged ? 'converged' : 'did not converge');
    failures.push(...state.failures);

    const neverAccepted = load.sends.filter((s) => s.messageIds.length === 0);
    for (const s of neverAccepted.slice(0, 5)) failures.push(`send ${s.key} was never accepted (${s.attempts} attempts from +${s.firstAt - t0} ms)`);
    if (neverAccepted.length > 5) failures.push(`... and ${neverAccepted.length - 5} more sends never accepted`);
    const problems = http.outcomes.filter((x) => x.problem);
    for (const p of problems.slice(0, 10)) failures.push(`${p.path} at +${p.at - t0} ms: ${p.problem}`);
    if (problems.length > 10) failures.push(`... and ${problems.length - 10} more bad answers`);
    failures.push(...recoveryFailures(leaderKill));

    const during = http.outcomes.filter((x) => x.at >= t0 && x.at <= loadEnd);
    const unavailable = during.filter((x) => x.status === 503);
    const gap = longestGapWithoutAcceptance(load.sends, t0, loadEnd);
    return {
      kind: target.kind,
      startedAt: new Date(t0).toISOString(),
      ok: failures.length === 0,
      failures,
      eventsReplicas,
      instances: instances.length,
      loadMs: loadEnd - t0,
      sends: {
        keys: load.sends.length,
        accepted: load.sends.length - neverAccepted.length,
        attempts: load.sends.reduce((n, s) => n + s.attempts, 0),
        neverAccepted: neverAccepted.length,
      },
      requests: {
        total: during.length,
        ok: during.filter((x) => x.status === 200).length,
        unavailable503: unavailable.length,
        slowest503Ms: Math.max(0, ...unavailable.map((x) => x.ms)),
        hangs: during.filter((x) => x.problem?.startsWith('hang')).length,
        bad: during.filter((x) => x.problem).length,
      },
      leaderKill,
      longestGapWithoutAcceptedSendMs: gap.ms,
      longestGapStartsAtMs: gap.from - t0,
      webhooks: state.webhooks,
      history: state.history,
      connections: state.connections,
      sessionsTakeoverMs: state.sessionsTakeoverMs,
      timeline,
      convergedAfterMs,
    };
  } finally {
    await nats.close();
  }
};

/** Creates an instance, turns its webhook on, links it through the sandbox phone and waits until it is connected. */
const linkInstance = async (http: DrillHttp, target: DrillTarget, path: string): Promise<DrillInstance> => {
  const id = String((await http.must('/v1/create_instance')).body.instance_id);
  const set = await http.must(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(target.webhookUrl(path))}`);
  await http.must(`/v1/get_qrcode?instance_id=${id}`);
  const number = `49151${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
  await http.must(`/v1/sandbox/scan?instance_id=${id}&number=${number}`);
  for (let attempt = 0; attempt < 100; attempt++) {
    if ((await http.call(`/v1/status?instance_id=${id}`)).body.state === 'connected') return { id, path, secret: String(set.body.signing_secret) };
    await sleep(200);
  }
  throw new Error(`instance ${id} did not connect after the scan`);
};

/** The replica holding the most leases (sessions: instances; webhooks: the sequencer): the kill that hurts most. */
const busiest = async (target: DrillTarget, nats: NatsObserver, service: 'sessions' | 'webhooks'): Promise<string> => {
  const replicas = await target.replicas(service);
  const held = await nats.leaseHolders(service);
  return [...replicas].sort((a, b) => (held.get(b) ?? 0) - (held.get(a) ?? 0))[0]!;
};

const readHistory = async (http: DrillHttp, id: string): Promise<HistoryEvent[]> => {
  const events: HistoryEvent[] = [];
  let cursor: number | null = 0;
  for (let page = 0; cursor !== null && page < 100; page++) {
    const answer = await http.must(`/v1/history?instance_id=${id}&cursor=${cursor}&limit=1000`);
    events.push(...(answer.body.events as HistoryEvent[]));
    cursor = answer.body.next_cursor as number | null;
  }
  return events;
};

const takenAtCache = new Map<string, number | null>();

/** One read of everything the checks judge, and whether it is final (nothing still on its way). */
const readBack = async (
  http: DrillHttp,
  nats: NatsObserver,
  instances: readonly DrillInstance[],
  load: Load,
  target: DrillTarget,
  kills: readonly Kill[],
  graceMs: number,
  t0: number,
) => {
  const failures: string[] = [];
  const received = await target.webhooksReceived();
  const taken = new Map<string, Set<string>>();
  const acceptedInHistory = new Map<string, Set<string>>();
  const totals = {
    webhooks: { expected: 0, received: 0, repeats: 0 },
    history: { events: 0, lackingReceipts: 0 },
    connections: 0,
    sessionsTakeoverMs: null as number | null,
  };
  let pending = false;
  // Appended last: the end of the failures is what a truncated CI log keeps.
  const postMortem: string[] = [];
  for (const instance of instances) {
    const events = await readHistory(http, instance.id);
    totals.history.events += events.length;
    taken.set(instance.id, await nats.takenIds(instance.id));
    acceptedInHistory.set(instance.id, new Set(events.filter((e) => e.type === 'MessageAccepted').map((e) => e.stream.split('.')[2]!)));
    const accepted = load.sends.filter((s) => s.instanceId === instance.id && s.messageIds.length > 0).map((s) => s.messageIds[0]!);
    const history = checkHistory(instance.id, events, accepted);
    failures.push(...history.failures);
    let neverTaken = 0;
    for (const { id: messageId, has } of history.lacking) {
      const key = `${instance.id}.${messageId}`;
      if (!takenAtCache.has(key)) takenAtCache.set(key, await nats.takenAt(instance.id, messageId));
      const takenAt = takenAtCache.get(key) ?? null;
      if (takenAt !== null && receiptsMayBeLost(takenAt, kills, graceMs)) totals.history.lackingReceipts++;
      else {
        pending = true;
        if (takenAt === null) neverTaken++;
        const when = takenAt === null ? 'never' : `at +${takenAt - t0} ms`;
        failures.push(`${instance.id}: message ${messageId} has only ${has.join(', ')} (taken by the platform ${when})`);
      }
    }
    const expected = expectedWebhookIds(events);
    const webhooks = checkWebhooks(instance, expected, received);
    if (webhooks.failures.length > 0) pending = true;
    failures.push(...webhooks.failures);
    totals.webhooks.expected += expected.length;
    totals.webhooks.received += webhooks.received;
    totals.webhooks.repeats += webhooks.repeats;
    const records = await nats.connections(instance.id);
    const connections = checkConnections(instance.id, records, kills);
    const takeover = takeoverMs(records, kills);
    if (takeover !== null) totals.sessionsTakeoverMs = Math.max(totals.sessionsTakeoverMs ?? 0, takeover);
    failures.push(...connections.failures);
    // After the drill every instance is back online, on exactly one connection.
    const state = (await http.must(`/v1/status?instance_id=${instance.id}`)).body.state;
    if (state !== 'connected' || connections.open !== 1) {
      pending = true;
      failures.push(`${instance.id}: at the end its state is ${String(state)} with ${connections.open} open connection(s)`);
    }
    totals.connections += connections.connections;
    if (neverTaken > 0) {
      const stuck = load.sends.filter((s) => s.instanceId === instance.id && s.messageIds.length > 0 && !taken.get(instance.id)?.has(s.messageIds[0]!));
      const first = Math.min(...stuck.map((s) => s.acceptedAt ?? Infinity));
      const lease = await nats.sessionLease(instance.id);
      postMortem.push(
        describeStuckInstance(
          instance.id,
          { count: neverTaken, firstAcceptedAt: Number.isFinite(first) ? first : null },
          String(state),
          lease,
          records,
          t0,
          Date.now(),
        ),
      );
    }
  }
  const sends = checkSends(load.sends, taken, acceptedInHistory);
  if (sends.length > 0) pending = true;
  failures.push(...sends, ...postMortem);
  return { converged: !pending, failures, ...totals };
};
