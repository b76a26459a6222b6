import type { Logger } from '../log';
import type { Commit, EventStore } from './port';

/**
 * Keeps an in-memory read model up to date from the commits of the streams matching a pattern. It resubscribes
 * after the position it reached when its subscription fails (e.g. NATS restarted), and lets a reader wait until a
 * given sequence has been applied (read-your-writes).
 */
export class Projection {
  private position = 0;
  private stopped = false;
  private closeCurrent: (() => Promise<void>) | null = null;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly store: EventStore,
    private readonly pattern: string,
    private readonly apply: (commit: Commit) => void,
    private readonly logger: Logger,
    /** false: `apply` reads no content fields (`SubscribeOptions.content`). */
    private readonly content = true,
  ) {}

  /** The sequence of the last commit applied. */
  get applied(): number {
    return this.position;
  }

  /** Starts applying the commits after `position` (0: from the log's beginning; a checkpoint's position to resume). */
  start(position = 0): void {
    this.position = position;
    void this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.closeCurrent?.();
    for (const wake of this.waiters) wake();
  }

  /** Resolves true once every commit up to `sequence` is applied, false if `timeoutMs` passes first. */
  async waitFor(sequence: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.position < sequence && !this.stopped) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return false;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(remaining, 100));
        this.waiters.add(done);
      });
    }
    return this.position >= sequence;
  }

  /**
   * Brings the model up to date for one stream: every commit of `stream` that exists now (and up to `upTo`) is
   * applied. A single-stream version is an indexed lookup, unlike the whole pattern's end (see `catchUp`).
   */
  async reachStream(stream: string, timeoutMs: number, upTo = Number.MAX_SAFE_INTEGER): Promise<boolean> {
    if (this.position >= upTo) return true;
    return this.waitFor(Math.min(await this.store.version(stream), upTo), timeoutMs);
  }

  /**
   * Brings the model up to the store's current end for the pattern. On nats-server 2.9 the end of a wildcard
   * pattern is found by scanning, so this is for rare reads (listing, readiness), not per request.
   */
  async catchUp(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    // The end's lookup counts in the time too: on a NATS that hangs rather than drops it waited for the request's own
    // time-out (5 s), and a readiness probe that gives up after 1 s saw a time-out instead of a 503.
    const end = await beforeDeadline(this.store.version(this.pattern), timeoutMs);
    return end !== null && this.waitFor(end, deadline - Date.now());
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const subscription = await this.store.subscribe(this.pattern, { fromSequence: this.position + 1, content: this.content });
        this.closeCurrent = () => subscription.close();
        if (this.stopped) await subscription.close();
        for await (const delivery of subscription) {
          if (delivery.commit.sequence <= this.position) continue;
          this.apply(delivery.commit);
          this.position = delivery.commit.sequence;
          for (const wake of this.waiters) wake();
        }
      } catch (error) {
        if (!this.stopped) this.logger.warn({ err: error, pattern: this.pattern }, 'projection subscription failed; resubscribing');
      }
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** The promise's value, or null when `ms` pass first (its later failure is then dropped: the race handles it). */
const beforeDeadline = async <T>(promise: Promise<T>, ms: number): Promise<T | null> => {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
};
