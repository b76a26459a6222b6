import { AppError } from '../errors';

/** An event about to be appended. `data` is a JSON object; secrets never go in it. */
export interface NewEvent {
  type: string;
  schemaVersion: number;
  occurredAt: string;
  data: Record<string, unknown>;
}

/** An event as stored: it carries its stream and the sequence of the commit that holds it. */
export interface RecordedEvent extends NewEvent {
  stream: string;
  sequence: number;
}

/** One append: the events of one command, stored as one message. */
export interface Commit {
  stream: string;
  sequence: number;
  commandId: string;
  events: RecordedEvent[];
}

/** A stream's version is the sequence of its last commit; 0 means the stream has no commit yet. */
export type ExpectedVersion = number | 'any';

export interface AppendOptions {
  expectedVersion: ExpectedVersion;
  /** Idempotency key: a repeated command id (within the store's duplicate window) appends nothing. */
  commandId: string;
}

export interface AppendResult {
  version: number;
  duplicate: boolean;
}

export interface ReadPage {
  commits: Commit[];
  /** Where the next page starts, or null when the read reached the end. */
  nextSequence: number | null;
}

/** A commit handed to a subscriber; a durable subscription redelivers it until it is acked. */
export interface Delivery {
  commit: Commit;
  /** How many times this commit has been delivered to this subscription (1 the first time). */
  deliveryCount: number;
  ack(): void;
  /** Hands the commit back, to be delivered again after `delayMs` (at once without it). */
  nak(delayMs?: number): void;
  /** Tells the store the commit is still being worked on, so it is not redelivered meanwhile. */
  inProgress(): void;
}

export interface Subscription extends AsyncIterable<Delivery> {
  /**
   * Stops asking for more. A durable subscription first receives what the store already sent it (a reader still
   * iterating gets it), then hands back at once what the reader did not take, and ends its iteration; so after a
   * clean shutdown nothing waits for the ack wait.
   */
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** Named, server-side position that survives restarts and is shared by competing replicas. */
  durableName?: string;
  /**
   * Durable only: how long a delivered commit may stay unacked before it is delivered again (default 30 s). What a
   * closed or crashed subscriber held is redelivered after this.
   */
  ackWaitMs?: number;
  /** How many commits a subscriber asks for at a time (default 256); smaller spreads work more evenly over replicas. */
  batch?: number;
  /**
   * Durable only: how many delivered commits may be unacked at once, over all its subscribers (default 1,000); past it
   * the store hands out nothing more. A commit put back with a delay (`nak(delayMs)`) counts until it comes back, so
   * long waits belong in `schedule`, not in `nak`. The in-memory adapter has no such bound.
   */
  maxAckPending?: number;
  /** First sequence to deliver (default 1: from the beginning). Ignored when the durable already exists. */
  fromSequence?: number;
  /**
   * Only commits holding an event of one of these types are handed out (absent: all); a durable subscription acks
   * the others itself. They are still read from the store, but never opened (`SealedEventStore`) or handed out.
   */
  types?: readonly string[];
  /**
   * false: the subscriber reads no content fields (`SEALED_FIELDS`: texts, captions, URLs, names), so a store that
   * seals them hands its events out with them null, unopened (no decryption per event). Default true.
   */
  content?: boolean;
}

/**
 * The event store port. Stream names are dot-separated tokens (`<instance_id>.instance`); a pattern may end in
 * `>` (all streams below) or hold `*` (one token). Adapters: JetStream (production) and in-memory; both pass the
 * same contract suite (`test/contract/eventStore.contract.ts`).
 */
export interface EventStore {
  append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult>;
  /** The stream's current version (0 when empty); with a pattern, the sequence of the last matching commit. */
  version(streamOrPattern: string): Promise<number>;
  /** The stream's commits after `afterVersion` (default: all), oldest first. */
  readStream(stream: string, afterVersion?: number): Promise<Commit[]>;
  /** Up to `limit` commits of the streams matching `pattern`, from `fromSequence` on, oldest first. */
  readPattern(pattern: string, fromSequence: number, limit: number): Promise<ReadPage>;
  /**
   * The commits of the streams matching `pattern` from `fromSequence` up to the last one there is when the scan
   * starts, oldest first, as one read: for long reads (history pages and exports). Breaking off ends the read.
   */
  scanPattern(pattern: string, fromSequence: number): AsyncIterable<Commit>;
  subscribe(pattern: string, options?: SubscribeOptions): Promise<Subscription>;
  /**
   * Appends `events` to `stream` once `at` has come (about at once when it is past), with no expected version and an
   * empty command id: a timer the store keeps, so work due hours from now is not held by a subscriber meanwhile. On
   * JetStream it is a message schedule, stored and replicated with the stream: it survives restarts and fails over.
   * One schedule per stream: a later one replaces the one still pending. Resolves once the schedule is stored. A
   * scheduled commit is a work item, not history: a store may be set to drop it some time after it was appended
   * (JetStream: `scheduledCommitTtlMs`).
   */
  schedule(stream: string, events: NewEvent[], at: Date, expected?: ScheduleExpectation): Promise<void>;
  /**
   * Whether this store keeps schedules. A nats-server before 2.12 takes a schedule as a plain message that never
   * fires, so its callers wait some other way (a job put back with a delay).
   */
  readonly schedules: boolean;
}

/** A schedule made from what was read of `stream` at `version`: refused (a version conflict) once `stream` moved on. */
export interface ScheduleExpectation {
  stream: string;
  version: number;
}

/** The optimistic-concurrency check failed: someone appended to the stream since it was read. */
export class ExpectedVersionConflictError extends AppError {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedVersion,
  ) {
    super('conflict', 'version_conflict', `stream ${stream} is not at version ${String(expected)}`);
  }
}

export const isVersionConflict = (error: unknown): error is ExpectedVersionConflictError => error instanceof ExpectedVersionConflictError;

/**
 * What a client hears of a version conflict that retrying with fresh state did not resolve (commandHandler's retries
 * ran out, or one escaped a service: grpc/errors.ts). Not the store's 409 `version_conflict`: nothing in the instance's
 * state refuses the request, another writer was faster each time, so the one thing a client can do is retry, which a
 * 503 with Retry-After says in the error model every route documents. The stream and version stay in the cause (logs).
 */
export const concurrentUpdate = (cause: ExpectedVersionConflictError): AppError =>
  new AppError('unavailable', 'concurrent_update', 'The instance was changed concurrently by another request; retry', { cause, retryAfterS: 1 });

const TOKEN = /^[A-Za-z0-9_-]+$/;

/** Checks a stream name: dot-separated tokens of letters, digits, `_` and `-`. */
export const assertStreamName = (stream: string): void => {
  if (!stream.split('.').every((token) => TOKEN.test(token))) throw new Error(`invalid stream name "${stream}"`);
};

/** Checks a pattern: stream-name tokens, `*` for one token, and `>` only as the last token. */
export const assertPattern = (pattern: string): void => {
  const tokens = pattern.split('.');
  const ok = tokens.every((t, i) => TOKEN.test(t) || t === '*' || (t === '>' && i === tokens.length - 1));
  if (!ok) throw new Error(`invalid stream pattern "${pattern}"`);
};

/** NATS-style subject matching: `*` matches one token, a final `>` one or more. */
export const matchesPattern = (pattern: string, stream: string): boolean => {
  const p = pattern.split('.');
  const s = stream.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
};
