import { Webhook } from 'standardwebhooks';
import { WEBHOOK_EVENT_TYPES } from '@wagw/lib';
import type { SandboxConnectionRecord } from '../../services/sessions/src/connector/sandbox/ledger';
import type { ReceivedWebhook } from './drill';
import type { SendRecord } from './load';

/**
 * The drill's verdicts, as pure functions over what it read back (histories, the sandbox ledger, the webhooks the
 * receiver got, the platform's connection records). Each returns the failures it found, as sentences.
 */

export interface HistoryEvent {
  sequence: number;
  stream: string;
  type: string;
  data: Record<string, unknown>;
}

export interface DrillInstance {
  id: string;
  /** The receiver path of its webhook, and the signing secret set_webhook answered. */
  path: string;
  secret: string;
}

/** A message's events in the order a correct history has them (MessageFailed must not occur in the drill). */
const MESSAGE_ORDER = ['MessageAccepted', 'MessageSent', 'MessageDelivered', 'MessageRead'];

/**
 * Every send answered 200 reaches the platform exactly once: each key got one message id however often it was
 * retried, the platform took that id (its ledger), and it took nothing the history does not hold as accepted.
 */
export const checkSends = (
  sends: readonly SendRecord[],
  taken: ReadonlyMap<string, ReadonlySet<string>>,
  accepted: ReadonlyMap<string, ReadonlySet<string>>,
): string[] => {
  const failures: string[] = [];
  for (const send of sends) {
    if (new Set(send.messageIds).size > 1) failures.push(`key ${send.key} was answered ${send.messageIds.length} different message ids`);
    const id = send.messageIds[0];
    if (id && !taken.get(send.instanceId)?.has(id)) failures.push(`message ${id} (key ${send.key}) was answered 200 but never reached the platform`);
  }
  for (const [instanceId, ids] of taken) {
    for (const id of ids) if (!accepted.get(instanceId)?.has(id)) failures.push(`the platform took ${id} of ${instanceId}, which its history never accepted`);
  }
  return failures;
};

/**
 * An instance's history is complete and in order: commit sequences never go back; each message has exactly one
 * MessageAccepted, then at most one each of Sent, Delivered, Read in that order, and no MessageFailed. Answers the
 * accepted messages that lack receipts too: the caller decides which may (see `receiptsMayBeLost`).
 */
export const checkHistory = (
  instanceId: string,
  events: readonly HistoryEvent[],
  acceptedIds: readonly string[],
): { failures: string[]; lacking: Array<{ id: string; has: string[] }> } => {
  const failures: string[] = [];
  const lacking: Array<{ id: string; has: string[] }> = [];
  for (let i = 1; i < events.length; i++) {
    if (events[i]!.sequence < events[i - 1]!.sequence)
      failures.push(`${instanceId}: history goes back from sequence ${events[i - 1]!.sequence} to ${events[i]!.sequence}`);
  }
  const perMessage = new Map<string, string[]>();
  for (const e of events) {
    const [, kind, messageId] = e.stream.split('.');
    if (kind !== 'message' || !messageId) continue;
    perMessage.set(messageId, [...(perMessage.get(messageId) ?? []), e.type]);
  }
  for (const [messageId, types] of perMessage) {
    const ranks = types.map((t) => MESSAGE_ORDER.indexOf(t));
    if (ranks.some((r) => r < 0) || new Set(types).size !== types.length || ranks.some((r, i) => i > 0 && r <= ranks[i - 1]!)) {
      failures.push(`${instanceId}: message ${messageId} has ${types.join(', ')}`);
    }
  }
  for (const id of acceptedIds) {
    const types = perMessage.get(id) ?? [];
    if (!types.includes('MessageAccepted')) failures.push(`${instanceId}: message ${id} was answered 200 but is not in the history`);
    else if (types.length < MESSAGE_ORDER.length) lacking.push({ id, has: types });
  }
  return { failures, lacking };
};

/** The webhook ids the history's events must produce once the webhook was on: `evt_<sequence>_<index in its commit>`. */
export const expectedWebhookIds = (events: readonly HistoryEvent[]): string[] => {
  const ids: string[] = [];
  const indexInCommit = new Map<number, number>();
  let on = false;
  for (const e of events) {
    const index = indexInCommit.get(e.sequence) ?? 0;
    indexInCommit.set(e.sequence, index + 1);
    if (e.type === 'WebhookConfigured') on = e.data.enabled === true;
    else if (on && Object.hasOwn(WEBHOOK_EVENT_TYPES, e.type)) ids.push(`evt_${e.sequence}_${index}`);
  }
  return ids;
};

/**
 * Every event's webhook arrives at least once, correctly signed, on its instance's path; a repeat carries the same
 * webhook-id and the same body.
 */
export const checkWebhooks = (
  instance: DrillInstance,
  expected: readonly string[],
  received: readonly ReceivedWebhook[],
): { failures: string[]; received: number; repeats: number } => {
  const failures: string[] = [];
  const mine = received.filter((r) => r.path === instance.path);
  const verifier = new Webhook(instance.secret);
  const bodies = new Map<string, string>();
  for (const r of mine) {
    try {
      verifier.verify(r.body, r.headers);
    } catch (error) {
      failures.push(`${instance.id}: a webhook with a bad signature (${String(error)})`);
      continue;
    }
    const body = JSON.parse(r.body) as { id: string; instance_id: string };
    if (body.id !== r.headers['webhook-id'] || body.instance_id !== instance.id)
      failures.push(`${instance.id}: webhook ${r.headers['webhook-id']} carries id ${body.id} of ${body.instance_id}`);
    const earlier = bodies.get(body.id);
    if (earlier !== undefined && earlier !== r.body) failures.push(`${instance.id}: webhook ${body.id} came again with another body`);
    bodies.set(body.id, r.body);
  }
  const missing = expected.filter((id) => !bodies.has(id));
  if (missing.length > 0) failures.push(`${instance.id}: ${missing.length} of ${expected.length} webhooks never arrived (${missing.slice(0, 5).join(', ')})`);
  const wanted = new Set(expected);
  const unknown = [...bodies.keys()].filter((id) => !wanted.has(id));
  if (unknown.length > 0) failures.push(`${instance.id}: webhooks for events not in its history: ${unknown.slice(0, 5).join(', ')}`);
  return { failures, received: mine.length, repeats: mine.length - bodies.size };
};

/**
 * Receipts may be missing only for a message the platform took shortly before a sessions replica was SIGKILLed: the
 * sandbox reports receipts on the connection, which died with the process (as on WhatsApp); the send handed out
 * again is recognised by the platform as taken, so nothing new is reported for it.
 */
export const receiptsMayBeLost = (takenAt: number, kills: readonly Kill[], graceMs: number): boolean =>
  kills.some((k) => k.service === 'sessions' && takenAt <= k.at && takenAt >= k.at - graceMs);

/** A replica killed (SIGKILL) at `at`: its connections ended then, whatever their records say. */
export interface Kill {
  service: string;
  id: string;
  at: number;
}

/**
 * Never two live connections for one instance: from the platform's own records, a connection lives from going
 * online until it ended, or until its holder was killed (a SIGKILLed process writes no end). Two that overlap, by
 * any amount, are a failure.
 */
export const checkConnections = (
  instanceId: string,
  records: readonly SandboxConnectionRecord[],
  kills: readonly Kill[],
): { failures: string[]; connections: number; open: number } => {
  const spans = records
    .map((r) => {
      const killed = kills.filter((k) => k.service === 'sessions' && k.id === r.holder && k.at >= r.online_at).map((k) => k.at);
      return { holder: r.holder, from: r.online_at, to: r.ended_at ?? (killed.length > 0 ? Math.min(...killed) : Infinity) };
    })
    .sort((a, b) => a.from - b.from);
  const failures: string[] = [];
  for (let i = 0; i < spans.length; i++) {
    for (let j = i + 1; j < spans.length; j++) {
      const [a, b] = [spans[i]!, spans[j]!];
      if (b.from < a.to) {
        const overlap = Number.isFinite(a.to) ? `${Math.min(a.to, b.to) - b.from} ms` : 'still both open';
        failures.push(`${instanceId}: two live connections (${a.holder} and ${b.holder}) for ${overlap} from ${new Date(b.from).toISOString()}`);
      }
    }
  }
  return { failures, connections: spans.length, open: spans.filter((span) => span.to === Infinity).length };
};

/**
 * How long the instance was without a connection after a sessions replica holding it was killed: from the kill to
 * the next connection going online (null when no kill hit one of its connections).
 */
export const takeoverMs = (records: readonly SandboxConnectionRecord[], kills: readonly Kill[]): number | null => {
  let longest: number | null = null;
  for (const kill of kills.filter((k) => k.service === 'sessions')) {
    const hit = records.some((r) => r.holder === kill.id && r.online_at <= kill.at && (r.ended_at === undefined || r.ended_at >= kill.at));
    const next = records.filter((r) => r.online_at > kill.at).map((r) => r.online_at);
    if (hit && next.length > 0) longest = Math.max(longest ?? 0, Math.min(...next) - kill.at);
  }
  return longest;
};

/**
 * One line on an instance whose accepted sends never reached the platform, for a failed drill's post-mortem (the CI
 * output keeps the end of the failures, not the container logs): who holds its lease, which connections the platform
 * saw, and when its first stuck send was accepted. Times count from the drill's start (`t0`).
 */
export const describeStuckInstance = (
  instanceId: string,
  stuck: { count: number; firstAcceptedAt: number | null },
  state: string,
  lease: { owner: string; until: number } | null,
  records: readonly SandboxConnectionRecord[],
  t0: number,
  now: number,
): string => {
  const at = (ms: number): string => `+${ms - t0} ms`;
  const held = lease ? `${lease.owner} (${lease.until > now ? `expires in ${lease.until - now} ms` : `expired ${now - lease.until} ms ago`})` : 'nobody';
  const connections = [...records]
    .sort((a, b) => a.online_at - b.online_at)
    .map((r) => `${r.holder} ${at(r.online_at)}..${r.ended_at === undefined ? 'open' : at(r.ended_at)}`);
  const since = stuck.firstAcceptedAt === null ? 'unknown' : at(stuck.firstAcceptedAt);
  return `${instanceId}: post-mortem: ${stuck.count} accepted send(s) never taken, the first accepted at ${since}; state ${state}; lease held by ${held}; platform connections: ${connections.join(', ') || 'none'}`;
};
