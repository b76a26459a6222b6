import { DeliverPolicy, type Consumer, type JsMsg, type MsgRequest, type NextMsgRequest, type PubAck, type StoredMsg } from '@nats-io/jetstream';
import { batchedWrites } from '../concurrency/turnBatcher';
import { unavailable } from '../errors';
import type { Logger } from '../log';
import { isOvertaken, STREAMS, type NatsHandle } from '../nats';
import { decodeCommit, encodeCommit } from './codec';
import { ensureEventsStream } from './eventsStream';
import { translateStoreError } from './jetStreamErrors';
import { JetStreamPublisher } from './jetStreamPublisher';
import { leaderMessage, orderedScan, rangeReaderFor, type RangeReader } from './jetStreamReader';
import { ensureDurable } from './durableConsumer';
import { durableSubscription } from './durableSubscription';
import { LIVE_CHECK_MS, openLiveSubscription, type LiveSource } from './liveSubscription';
import { retryPauseFor } from './publishRetries';
import { withTypes } from './typeFilter';
import {
  assertPattern,
  assertStreamName,
  ExpectedVersionConflictError,
  type ScheduleExpectation,
  isVersionConflict,
  type AppendOptions,
  type AppendResult,
  type Commit,
  type Delivery,
  type EventStore,
  type NewEvent,
  type ReadPage,
  type SubscribeOptions,
  type Subscription,
} from './port';

export interface JetStreamEventStoreOptions {
  /** JetStream stream name (default `EVENTS`). */
  streamName?: string;
  /** Subject prefix (default `events`): stream `A.instance` is subject `events.A.instance`. */
  subjectPrefix?: string;
  /** How long a command id is remembered for idempotent retries (default 10 min). */
  duplicateWindowMs?: number;
  /** Where a subscription reports pulls that fail (NATS restarting) and messages it skips. */
  logger?: Logger;
  /**
   * Scheduled commits are removed this long after they were appended (a per-message TTL, 2.11+): they are work
   * items, not history, and some callers make many (a webhook retry put off every few minutes while its endpoint is
   * down). Absent: kept like any commit.
   */
  scheduledCommitTtlMs?: number;
  /** How long a scan's consumer may deliver nothing while the scan waits on it (default 10 s; shorter in tests). */
  scanSilenceMs?: number;
  /** How often a quiet live subscription checks that the log has not moved on without it (LIVE_CHECK_MS). */
  liveCheckMs?: number;
}

/**
 * The event store on NATS JetStream: one stream, one subject per aggregate, one message per commit.
 * `Nats-Msg-Id` = command id (dedupe), `Nats-Expected-Last-Subject-Sequence` = expected version (CAS).
 */
export class JetStreamEventStore implements EventStore {
  readonly streamName: string;
  private readonly prefix: string;
  /** Schedules live beside the streams, not among them: no pattern read ever sees one. */
  private readonly schedulePrefix: string;
  /** Appends and acks of one event-loop turn leave in one socket write. */
  private readonly writes = batchedWrites();

  private readonly publisher: JetStreamPublisher;
  private readonly readRange: RangeReader;
  private readonly logger: Logger | undefined;
  private readonly scheduledCommitTtlMs: number | undefined;
  private readonly scanSilenceMs: number | undefined;
  private readonly liveCheckMs: number;
  /** Set at `open` from the stream as the server keeps it. */
  schedules = false;

  private constructor(
    private readonly nats: NatsHandle,
    options: JetStreamEventStoreOptions,
  ) {
    this.logger = options.logger;
    this.scheduledCommitTtlMs = options.scheduledCommitTtlMs;
    this.scanSilenceMs = options.scanSilenceMs;
    this.liveCheckMs = options.liveCheckMs ?? LIVE_CHECK_MS;
    this.streamName = options.streamName ?? STREAMS.events.name;
    this.prefix = options.subjectPrefix ?? STREAMS.events.subjectPrefix;
    this.schedulePrefix = `${this.prefix}_schedule`;
    this.publisher = new JetStreamPublisher(nats.nc, nats.timeoutMs);
    this.readRange = rangeReaderFor(nats, this.streamName, this.scanSilenceMs);
    nats.onDisconnect(() => this.publisher.abandonAll());
  }

  /** Creates the stream when missing (or aligns its settings) and returns the store. */
  static async open(nats: NatsHandle, options: JetStreamEventStoreOptions = {}): Promise<JetStreamEventStore> {
    const store = new JetStreamEventStore(nats, options);
    const config = await ensureEventsStream(nats, {
      name: store.streamName,
      subjectPrefixes: [store.prefix, store.schedulePrefix],
      duplicateWindowMs: options.duplicateWindowMs ?? 10 * 60_000,
      commitTtl: Boolean(store.scheduledCommitTtlMs),
    });
    // A server before 2.12 drops the setting it does not know (and would store a schedule as a plain message).
    store.schedules = config.allow_msg_schedules === true;
    if (!store.schedules)
      store.logger?.warn({ stream: store.streamName }, 'this nats-server keeps no message schedules (2.12 does): work due later is held by consumers');
    return store;
  }

  /**
   * Appends one commit. A publish no server took (a leader election on a cluster) is repeated within the publish
   * time-out; that is safe because the command id makes the server drop a repeat. A version conflict whose commit
   * turns out to be this very command (an earlier attempt was stored but its ack was lost: a time-out, a dropped
   * connection, a leader change) is reported as the duplicate it is, not as a conflict.
   */
  async append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    assertStreamName(stream);
    if (events.length === 0) throw new Error('a commit holds at least one event');
    const publish = {
      msgId: options.commandId,
      ...(options.expectedVersion === 'any' ? {} : { expectedLastSubjectSequence: options.expectedVersion }),
    };
    const subject = this.subject(stream);
    const data = encodeCommit(events);
    const once = (): Promise<PubAck> =>
      new Promise<PubAck>((resolve, reject) => this.writes.push(() => void this.publisher.publish(subject, data, publish).then(resolve, reject)));
    const deadline = performance.now() + this.nats.timeoutMs;
    const retried = async (): Promise<PubAck> => {
      for (;;) {
        try {
          return await once();
        } catch (error) {
          const pause = retryPauseFor(error);
          if (pause === null || performance.now() + pause > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, pause));
          this.nats.ensureConnected();
        }
      }
    };
    try {
      // No whileConnected here: the publisher's reply inbox already fails every waiting publish when the
      // connection drops (hot path: one listener less per append).
      this.nats.ensureConnected();
      const ack = await retried().catch((error: unknown) => {
        throw translateStoreError(error, this.nats.isConnected(), { stream, options });
      });
      return { version: ack.seq, duplicate: ack.duplicate };
    } catch (error) {
      if (!isVersionConflict(error) || options.expectedVersion === 'any') throw error;
      const stored = await this.storedCommit(subject, options.expectedVersion, options.commandId);
      if (stored === null) throw error;
      return { version: stored, duplicate: true };
    }
  }

  /** A message schedule on `<prefix>_schedule.<stream>`, targeting the stream's subject (see the port). */
  async schedule(stream: string, events: NewEvent[], at: Date, expected?: ScheduleExpectation): Promise<void> {
    assertStreamName(stream);
    if (events.length === 0) throw new Error('a commit holds at least one event');
    if (!this.schedules) throw new Error(`stream ${this.streamName} keeps no schedules on this nats-server`);
    const check = expected ? { expectedLastSubjectSequence: expected.version, expectedLastSubjectSequenceSubject: this.subject(expected.stream) } : {};
    // No Nats-Msg-Id: a repeat replaces the pending schedule, which is what a repeat means here.
    try {
      await this.guard(() =>
        this.publisher.publish(`${this.schedulePrefix}.${stream}`, encodeCommit(events), {
          schedule: { at, target: this.subject(stream), ttlMs: this.scheduledCommitTtlMs },
          ...check,
        }),
      );
    } catch (error) {
      if (expected && isOvertaken(error)) throw new ExpectedVersionConflictError(expected.stream, expected.version);
      throw error;
    }
  }

  async version(stream: string): Promise<number> {
    assertPattern(stream);
    const last = await this.guard(() => this.currentMessage({ last_by_subj: this.subject(stream) }));
    return last?.seq ?? 0;
  }

  /** The sequence of the commit right after `afterVersion` on `subject` when it holds `commandId`, else null. */
  private async storedCommit(subject: string, afterVersion: number, commandId: string): Promise<number | null> {
    const next = await this.guard(() => this.currentMessage({ seq: afterVersion + 1, next_by_subj: subject }));
    return next && next.header.get('Nats-Msg-Id') === commandId ? next.seq : null;
  }

  /**
   * One message, read so that it reflects every acknowledged append. On one server that is a direct get. On a
   * replicated stream direct gets are answered by any replica, which may not have applied the latest commit yet
   * (measured on 2.9.10 R3: 86-102 of 2,000 lookups right after a publish were stale), so the stream leader answers:
   * read-your-writes, versions and compare-and-set never see the past.
   */
  private currentMessage(query: MsgRequest | NextMsgRequest): Promise<StoredMsg | null> {
    if (this.nats.replicas === 1) return this.nats.jsm.direct.getMessage(this.streamName, query);
    return leaderMessage(this.nats, this.streamName, query);
  }

  async readStream(stream: string, afterVersion = 0): Promise<Commit[]> {
    const last = await this.version(stream);
    if (last <= afterVersion) return [];
    const page = await this.readPattern(stream, afterVersion + 1, Number.MAX_SAFE_INTEGER);
    return page.commits;
  }

  async readPattern(pattern: string, fromSequence: number, limit: number): Promise<ReadPage> {
    assertPattern(pattern);
    const from = Math.max(1, fromSequence);
    // The end is fixed before reading: a page never waits for commits that are not there.
    const end = await this.version(pattern);
    if (end < from || limit <= 0) return { commits: [], nextSequence: null };
    return this.guard(async () => {
      const commits = await this.readRange(this.subject(pattern), from, end, limit, (m) => decodeCommit(this.streamOf(m.subject), m.seq, m.commandId, m.data));
      const last = commits.at(-1)?.sequence ?? 0;
      if (last < end && commits.length < limit) {
        throw unavailable('event_store_unavailable', 'The event store did not answer a read in time');
      }
      return { commits, nextSequence: last < end ? last + 1 : null };
    });
  }

  async *scanPattern(pattern: string, fromSequence: number): AsyncGenerator<Commit> {
    assertPattern(pattern);
    const from = Math.max(1, fromSequence);
    const end = await this.version(pattern);
    if (end < from) return;
    try {
      for await (const m of orderedScan(this.nats, this.streamName, this.subject(pattern), from, end, this.scanSilenceMs)) {
        yield decodeCommit(this.streamOf(m.subject), m.seq, m.commandId, m.data);
      }
    } catch (error) {
      throw translateStoreError(error, this.nats.isConnected());
    }
  }

  async subscribe(pattern: string, options: SubscribeOptions = {}): Promise<Subscription> {
    const decode = (m: JsMsg): Delivery => ({
      commit: this.decode(m),
      deliveryCount: m.info.deliveryCount,
      ack: () => this.writes.push(() => m.ack()),
      nak: (delayMs?: number) => this.writes.push(() => m.nak(delayMs)),
      inProgress: () => this.writes.push(() => m.working()),
    });
    if (options.durableName) {
      const consumer = await this.guard(() => this.consumerFor(pattern, options));
      const durable = durableSubscription(consumer, options.batch ?? 256, decode, () => this.consumerFor(pattern, options), this.logger);
      return withTypes(durable, options.types, true);
    }
    const source: LiveSource = {
      open: async (from) => {
        const consumer = await this.guard(() => this.consumerFor(pattern, { ...options, fromSequence: from }));
        return this.guard(() => consumer.consume({ max_messages: options.batch ?? 256 }));
      },
      end: () => this.version(pattern),
    };
    const live = await openLiveSubscription(source, Math.max(1, options.fromSequence ?? 1), decode, this.liveCheckMs, this.logger);
    return withTypes(live, options.types, false);
  }

  private async consumerFor(pattern: string, options: SubscribeOptions): Promise<Consumer> {
    const { js, jsm } = this.nats;
    const from = Math.max(1, options.fromSequence ?? 1);
    const start = from > 1 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from } : { deliver_policy: DeliverPolicy.All };
    if (!options.durableName) return js.consumers.get(this.streamName, { filter_subjects: this.subject(pattern), ...start });
    await ensureDurable(jsm, this.streamName, options.durableName, {
      filter: this.subject(pattern),
      ackWaitMs: options.ackWaitMs,
      maxAckPending: options.maxAckPending,
      start,
    });
    return js.consumers.get(this.streamName, options.durableName);
  }

  private decode(m: JsMsg): Commit {
    return decodeCommit(this.streamOf(m.subject), m.seq, m.headers?.get('Nats-Msg-Id') ?? '', m.string());
  }

  private streamOf(subject: string): string {
    return subject.slice(this.prefix.length + 1);
  }

  private subject(stream: string): string {
    return `${this.prefix}.${stream}`;
  }

  /** Fails fast while disconnected and translates the client's errors into the port's. */
  private async guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await this.nats.whileConnected(operation);
    } catch (error) {
      throw translateStoreError(error, this.nats.isConnected());
    }
  }
}
