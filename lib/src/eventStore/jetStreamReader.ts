import {
  DeliverPolicy,
  JetStreamError,
  type BatchCallback,
  type DirectBatchStartSeq,
  type JsMsg,
  type MsgRequest,
  type NextMsgRequest,
  type StoredMsg,
} from '@nats-io/jetstream';
import type { QueuedIterator } from '@nats-io/transport-node';
import { unavailable } from '../errors';
import { LogThrottle } from '../log';
import { compareVersions, type NatsHandle } from '../nats';
import type { Commit } from './port';

/** Reads a range of a stream's messages matching a subject filter, oldest first, up to a known last sequence. */
export type RangeReader = (filter: string, from: number, end: number, limit: number, decode: (m: ReadMessage) => Commit) => Promise<Commit[]>;

/** What both read paths hand to the decoder. */
export interface ReadMessage {
  subject: string;
  seq: number;
  commandId: string;
  data: string;
}

const READ_BATCH = 1_000;
const READ_TIMEOUT_MS = 10_000;
/** Ordered consumers one scan tries (see orderedScan). */
const SCAN_CONSUMERS = 2;
/**
 * Consumers a scan replaces at once when no server took their pull (no_responders), a short pause apart: on a 3-node
 * cluster the first pull of a new consumer now and then reaches a node that does not know it yet (measured on the
 * launcher's 3-node cluster: 6 scans in 300 waited 20 s, 0 once replaced), and the client pulls again only after two
 * idle heartbeats, 30 s.
 */
const REFUSED_CONSUMERS = 5;
const REFUSED_PAUSE_MS = 50;
/** A replica behind the leader answers fewer messages than the range holds; it is asked again this many times. */
const BEHIND_RETRIES = 50;
const BEHIND_PAUSE_MS = 20;

const fromStored = (m: StoredMsg): ReadMessage => ({ subject: m.subject, seq: m.seq, commandId: m.header?.get('Nats-Msg-Id') ?? '', data: m.string() });
const fromConsumed = (m: JsMsg): ReadMessage => ({ subject: m.subject, seq: m.seq, commandId: m.headers?.get('Nats-Msg-Id') ?? '', data: m.string() });

/**
 * A replica's 404 (message not found) to a batch direct get: it holds nothing at or after the sequence asked for. The
 * readers ask only up to a sequence the stream is known to hold, so the replica has not stored it yet (an R3 follower
 * behind its leader): behind like a short answer, asked again, not a failed read (a hunt saw 18 such reads of just
 * appended sends fail in 10 minutes, each logged as NATS unreachable). The client's own class for it is internal.
 */
const nothingStoredYet = (error: Error): boolean => error instanceof JetStreamError && (error as { code?: unknown }).code === 404;

/**
 * One batch direct get, whole: the messages a replica answers (at most `request.batch`). The client's callback form,
 * not its iterator: the iterator never takes back its reply subscription, so every read left one behind in the client
 * and on the server (measured: 1,000 reads, 1,000 more subscriptions on the connection). The client's time-out covers
 * only a batch's first message; a replica that dies half-way through its answer never sends the rest, so a batch
 * that goes silent for `silenceMs` ends with what came (the caller asks again from there).
 */
const readBatch = (nats: NatsHandle, streamName: string, request: DirectBatchStartSeq, silenceMs: number): Promise<StoredMsg[]> =>
  new Promise((resolve, reject) => {
    const messages: StoredMsg[] = [];
    let answer: QueuedIterator<StoredMsg> | null = null;
    let heard = true;
    let silent = false;
    // One timer per batch, not per message: silent for a whole tick, the batch is stopped.
    const watchdog = setInterval(() => {
      if (!heard) {
        silent = true;
        answer?.stop();
      }
      heard = false;
    }, silenceMs);
    const callback: BatchCallback<StoredMsg> = (done, m) => {
      heard = true;
      if (!done) {
        messages.push(m);
        return;
      }
      clearInterval(watchdog);
      if (done.err && !silent && !nothingStoredYet(done.err)) reject(done.err);
      else resolve(messages);
    };
    nats.jsm.direct.getBatch(streamName, { ...request, callback }).then(
      (iterator) => {
        answer = iterator;
        if (silent) iterator.stop();
      },
      (error: Error) => {
        clearInterval(watchdog);
        reject(error);
      },
    );
  });

/**
 * One message as the stream leader has it (its message-get API; on a cluster only the leader answers it): every
 * acknowledged commit is there, where a replica answering a direct get may not have applied it yet.
 */
export const leaderMessage = (nats: NatsHandle, streamName: string, query: MsgRequest | NextMsgRequest): Promise<StoredMsg | null> =>
  // The API takes `next_by_subj` too; the client's type lists only seq and last_by_subj.
  nats.jsm.streams.getMessage(streamName, query as MsgRequest);

/** Every read may find the replica behind: said once a minute per stream, with how many were held back. */
const behindLog = new LogThrottle(60_000);

/**
 * The rest of a range, one message per request to the stream leader (`leaderMessage`): for a read whose replica
 * stays behind. Ends early when the leader holds nothing more up to `end` (purged meanwhile).
 */
const readFromLeader = async (
  nats: NatsHandle,
  streamName: string,
  filter: string,
  from: number,
  end: number,
  limit: number,
  commits: Commit[],
  decode: (m: ReadMessage) => Commit,
) => {
  for (let next = from; next <= end && commits.length < limit;) {
    const m = await leaderMessage(nats, streamName, { seq: next, next_by_subj: filter });
    if (!m || m.seq > end) return;
    commits.push(decode(fromStored(m)));
    next = m.seq + 1;
  }
};

/**
 * Batch direct get (nats-server 2.11+): any replica answers, no consumer is created per read, and reads keep
 * working while a cluster elects a new stream leader (consumer-based reads did not, for 15-19 s after a leader died,
 * on 2.9.10). A replica that has not caught up with `end` yet answers short, or stops half-way (`readBatch`); the
 * rest is asked for again. A replica that stays behind for BEHIND_RETRIES asks leaves the rest of the read to the stream
 * leader: a server answers direct gets from its own replica first, and a follower answers them from 90 % caught up on
 * (nats-server 2.12), so a client on a node that lags answers short again and again (the likely cause of a CI drill
 * whose one instance had its queued sends unread for a minute, while the node that had been killed caught up).
 */
const batchDirectReader =
  (nats: NatsHandle, streamName: string, silenceMs: number): RangeReader =>
  async (filter, from, end, limit, decode) => {
    const commits: Commit[] = [];
    let next = from;
    let behind = 0;
    while (next <= end && commits.length < limit) {
      const batch = await readBatch(nats, streamName, { seq: next, batch: Math.min(READ_BATCH, limit - commits.length), next_by_subj: filter }, silenceMs);
      const before = commits.length;
      for (const m of batch) {
        if (m.seq > end || commits.length >= limit) break;
        commits.push(decode(fromStored(m)));
        next = m.seq + 1;
      }
      if (commits.length > before) continue;
      if (++behind > BEHIND_RETRIES) {
        behindLog.maybe(streamName, (heldBack) =>
          nats.logger.warn(
            { stream: streamName, from: next, end, heldBack },
            'a replica answering direct gets stays behind the stream; reads it cannot answer go to the stream leader',
          ),
        );
        await readFromLeader(nats, streamName, filter, next, end, limit, commits, decode);
        return commits;
      }
      await new Promise((resolve) => setTimeout(resolve, BEHIND_PAUSE_MS));
    }
    return commits;
  };

/**
 * A range read as one ordered consumer, oldest first, up to `end`: the way for long reads. The consumer pushes with
 * flow control and its messages carry only their stored headers, where a batch direct get answers every message
 * with five headers of its own to parse: 100,000 one-event commits read 65-84k/s this way against 22-43k/s by
 * batch direct gets of 1,000 (same process and machine, 2026-11-23). Breaking off stops the consumer. A consumer that
 * delivers nothing for `silenceMs` (READ_TIMEOUT_MS) is replaced once, from the next sequence (on a 3-node cluster
 * under load one stayed silent for good: a CI run's contract test waited 10-20 s for a single message); a second
 * silence fails the read as unavailable. One whose pull no server took is replaced at once (REFUSED_CONSUMERS).
 * Only time spent waiting on the server counts: while the generator is suspended at a yield, its reader holds the
 * commit (an export to a slow or paused HTTP client, a webhook replay waiting on a slow endpoint), and however long
 * that takes, the consumer has not failed to deliver.
 */
export async function* orderedScan(
  nats: NatsHandle,
  streamName: string,
  filter: string,
  from: number,
  end: number,
  silenceMs = READ_TIMEOUT_MS,
): AsyncGenerator<ReadMessage> {
  let next = from;
  let silences = 0;
  let refusals = 0;
  for (;;) {
    const consumer = await nats.js.consumers.get(streamName, { filter_subjects: filter, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: next });
    const messages = await consumer.consume({ max_messages: READ_BATCH });
    // A tick only counts while the scan waits for the server; two counted ticks in a row (silenceMs to twice
    // that without a message) are a silent consumer. One flag per message, no timer per message (65k+/s).
    let waiting = true;
    let quietTicks = 0;
    let ended: 'silent' | 'refused' | null = null;
    const watchdog = setInterval(() => {
      if (!waiting || ++quietTicks < 2) return;
      ended ??= 'silent';
      messages.stop();
    }, silenceMs);
    void (async () => {
      for await (const status of messages.status()) {
        if (status.type !== 'no_responders') continue;
        ended ??= 'refused';
        messages.stop();
        return;
      }
    })().catch(() => undefined);
    try {
      for await (const m of messages) {
        waiting = false;
        quietTicks = 0;
        yield fromConsumed(m);
        if (m.seq >= end) return;
        next = m.seq + 1;
        waiting = true;
      }
    } finally {
      clearInterval(watchdog);
      messages.stop();
    }
    if (ended === 'refused' && ++refusals < REFUSED_CONSUMERS) {
      await new Promise((resolve) => setTimeout(resolve, REFUSED_PAUSE_MS));
      continue;
    }
    if (ended !== 'silent' || ++silences >= SCAN_CONSUMERS) throw unavailable('event_store_unavailable', 'The event store did not answer a read in time');
  }
}

/** An ordered consumer per read: the path for servers older than 2.11 (no batch direct get). */
const orderedConsumerReader =
  (nats: NatsHandle, streamName: string, silenceMs: number): RangeReader =>
  async (filter, from, end, limit, decode) => {
    const commits: Commit[] = [];
    for await (const m of orderedScan(nats, streamName, filter, from, end, silenceMs)) {
      commits.push(decode(m));
      if (commits.length >= limit) break;
    }
    return commits;
  };

export const rangeReaderFor = (nats: NatsHandle, streamName: string, silenceMs = READ_TIMEOUT_MS): RangeReader =>
  compareVersions(nats.serverVersion, '2.11.0') >= 0 ? batchDirectReader(nats, streamName, silenceMs) : orderedConsumerReader(nats, streamName, silenceMs);
