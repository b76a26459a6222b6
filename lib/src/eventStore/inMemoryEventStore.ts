import { decodeCommit, encodeCommit } from './codec';
import {
  assertStreamName,
  ExpectedVersionConflictError,
  matchesPattern,
  type AppendOptions,
  type AppendResult,
  type Commit,
  type Delivery,
  type EventStore,
  type NewEvent,
  type ReadPage,
  type ScheduleExpectation,
  type SubscribeOptions,
  type Subscription,
} from './port';
import { withTypes } from './typeFilter';

interface DurableState {
  next: number;
  unacked: Map<number, number>;
}

/**
 * An event store in memory, for unit tests of handlers and for trying things out. Same contract as the JetStream
 * adapter (one contract suite runs on both); nothing survives the process.
 */
export class InMemoryEventStore implements EventStore {
  private readonly log: Commit[] = [];
  private readonly seen = new Map<string, number>();
  /** Each stream's version: appends to new streams stay O(1) (a scan of the log made a 21,000-commit test take 78 s). */
  private readonly versions = new Map<string, number>();
  private readonly durables = new Map<string, DurableState>();
  private readonly listeners = new Set<() => void>();
  /** Pending schedules by stream (nothing survives the process here). */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  readonly schedules = true;

  async append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    assertStreamName(stream);
    if (events.length === 0) throw new Error('a commit holds at least one event');
    const duplicate = this.seen.get(options.commandId);
    if (duplicate !== undefined) return { version: duplicate, duplicate: true };
    const current = this.currentVersion(stream);
    if (options.expectedVersion !== 'any' && options.expectedVersion !== current) {
      throw new ExpectedVersionConflictError(stream, options.expectedVersion);
    }
    const sequence = this.commit(stream, events, options.commandId);
    this.seen.set(options.commandId, sequence);
    return { version: sequence, duplicate: false };
  }

  async schedule(stream: string, events: NewEvent[], at: Date, expected?: ScheduleExpectation): Promise<void> {
    assertStreamName(stream);
    if (events.length === 0) throw new Error('a commit holds at least one event');
    if (expected && this.currentVersion(expected.stream) !== expected.version) throw new ExpectedVersionConflictError(expected.stream, expected.version);
    clearTimeout(this.timers.get(stream));
    const timer = setTimeout(
      () => {
        this.timers.delete(stream);
        this.commit(stream, events, '');
      },
      Math.max(0, at.getTime() - Date.now()),
    );
    timer.unref();
    this.timers.set(stream, timer);
  }

  private commit(stream: string, events: NewEvent[], commandId: string): number {
    const sequence = this.log.length + 1;
    this.log.push(decodeCommit(stream, sequence, commandId, encodeCommit(events)));
    this.versions.set(stream, sequence);
    for (const wake of this.listeners) wake();
    return sequence;
  }

  async version(stream: string): Promise<number> {
    return this.currentVersion(stream);
  }

  private currentVersion(stream: string): number {
    if (!/[*>]/.test(stream)) return this.versions.get(stream) ?? 0;
    for (let i = this.log.length - 1; i >= 0; i--) if (matchesPattern(stream, this.log[i]!.stream)) return this.log[i]!.sequence;
    return 0;
  }

  async readStream(stream: string, afterVersion = 0): Promise<Commit[]> {
    return this.log.filter((c) => c.stream === stream && c.sequence > afterVersion);
  }

  async readPattern(pattern: string, fromSequence: number, limit: number): Promise<ReadPage> {
    const matching = this.log.filter((c) => c.sequence >= fromSequence && matchesPattern(pattern, c.stream));
    const commits = matching.slice(0, limit);
    const last = commits.at(-1);
    return { commits, nextSequence: matching.length > commits.length && last ? last.sequence + 1 : null };
  }

  async *scanPattern(pattern: string, fromSequence: number): AsyncGenerator<Commit> {
    const end = this.log.length;
    for (const commit of this.log.slice(0, end)) if (commit.sequence >= fromSequence && matchesPattern(pattern, commit.stream)) yield commit;
  }

  async subscribe(pattern: string, options: SubscribeOptions = {}): Promise<Subscription> {
    const from = Math.max(1, options.fromSequence ?? 1);
    const state: DurableState = options.durableName
      ? (this.durables.get(options.durableName) ?? { next: from, unacked: new Map() })
      : { next: from, unacked: new Map() };
    if (options.durableName) this.durables.set(options.durableName, state);
    const redeliver = [...state.unacked.keys()].sort((a, b) => a - b);
    let closed = false;
    let wake: () => void = () => undefined;
    const listener = (): void => wake();
    this.listeners.add(listener);
    const deliver = (commit: Commit): Delivery => {
      const count = (state.unacked.get(commit.sequence) ?? 0) + 1;
      state.unacked.set(commit.sequence, count);
      return {
        commit,
        deliveryCount: count,
        ack: () => void state.unacked.delete(commit.sequence),
        nak: (delayMs?: number) => {
          const again = (): void => {
            redeliver.push(commit.sequence);
            wake();
          };
          if (delayMs) setTimeout(again, delayMs).unref();
          else again();
        },
        inProgress: () => undefined,
      };
    };
    const log = this.log;
    const listeners = this.listeners;
    const subscription: Subscription = {
      async *[Symbol.asyncIterator]() {
        while (!closed) {
          const again = redeliver.shift();
          if (again !== undefined) {
            yield deliver(log[again - 1]!);
            continue;
          }
          const next = log.slice(state.next - 1).find((c) => matchesPattern(pattern, c.stream));
          if (next) {
            state.next = next.sequence + 1;
            yield deliver(next);
            continue;
          }
          state.next = log.length + 1;
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
      close: async () => {
        closed = true;
        listeners.delete(listener);
        wake();
      },
    };
    return withTypes(subscription, options.types, options.durableName !== undefined);
  }
}
