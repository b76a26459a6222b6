import type { DrillHttp } from './http';

/** One send as the client saw it: one idempotency key, retried on 503 (or no answer) under that same key. */
export interface SendRecord {
  key: string;
  instanceId: string;
  attempts: number;
  /** Every message id a 200 answered for this key (a correct gateway answers one, however often retried). */
  messageIds: string[];
  /** When the first attempt started, when the last one started, when a 200 came (absent: never accepted). */
  firstAt: number;
  lastAttemptAt: number;
  acceptedAt?: number;
}

export interface LoadOptions {
  /** Least time between the starts of two sends of one instance. */
  sendEveryMs: number;
  /** Pause before retrying a 503; attempts per key and time from its first attempt (bounded: a key never accepted is reported). */
  retryPauseMs: number;
  maxAttempts: number;
  retryForMs: number;
  /** Upper bound of sends per instance, whatever the drill's length. */
  maxSendsPerInstance: number;
  /** A status or history read every this many ms (traffic through the instances service). */
  readEveryMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A steady, bounded load: each instance sends one message after the other (a careful client: one key, retried on
 * 503), and a reader polls status and history, so every service carries traffic when its replica is killed.
 */
export class Load {
  readonly sends: SendRecord[] = [];
  private stopping = false;
  private running: Promise<void>[] = [];

  constructor(
    private readonly http: DrillHttp,
    private readonly instanceIds: readonly string[],
    private readonly options: LoadOptions,
    private readonly runId: string,
  ) {}

  start(): void {
    this.running = [...this.instanceIds.map((id, i) => this.sendLoop(id, i)), this.readLoop()];
  }

  /** Stops starting new sends and waits until the ones under way are accepted or out of attempts. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
  }

  private async sendLoop(instanceId: string, index: number): Promise<void> {
    for (let n = 1; n <= this.options.maxSendsPerInstance && !this.stopping; n++) {
      const started = Date.now();
      await this.send(instanceId, `${this.runId}-i${index}-${n}`, n);
      await sleep(Math.max(0, started + this.options.sendEveryMs - Date.now()));
    }
  }

  private async send(instanceId: string, key: string, n: number): Promise<void> {
    const record: SendRecord = { key, instanceId, attempts: 0, messageIds: [], firstAt: Date.now(), lastAttemptAt: 0 };
    this.sends.push(record);
    const body = { instance_id: instanceId, number: '4915100000000', type: 'text', message: `drill ${key} (${n})` };
    while (record.attempts < this.options.maxAttempts && Date.now() - record.firstAt < this.options.retryForMs) {
      record.attempts++;
      record.lastAttemptAt = Date.now();
      const answer = await this.http.call('/v1/send', { method: 'POST', body, headers: { 'idempotency-key': key } });
      if (answer.status === 200) {
        record.messageIds.push(String(answer.body.message_id));
        record.acceptedAt = Date.now();
        return;
      }
      // Anything but a 503 or no answer is not retried (and already recorded as a problem by the client).
      if (answer.status !== 503 && answer.status !== 0) return;
      await sleep(this.options.retryPauseMs);
    }
  }

  private async readLoop(): Promise<void> {
    for (let n = 0; !this.stopping && n < 100_000; n++) {
      const id = this.instanceIds[n % this.instanceIds.length]!;
      await this.http.call(n % 2 === 0 ? `/v1/status?instance_id=${id}` : `/v1/history?instance_id=${id}&limit=5`);
      await sleep(this.options.readEveryMs);
    }
  }
}

/** The longest stretch of [from, to] without a send answered 200, and where it started. */
export const longestGapWithoutAcceptance = (sends: readonly SendRecord[], from: number, to: number): { ms: number; from: number } => {
  const times = sends
    .map((s) => s.acceptedAt)
    .filter((t): t is number => t !== undefined && t >= from && t <= to)
    .sort((a, b) => a - b);
  let best = { ms: 0, from };
  let previous = from;
  for (const t of [...times, to]) {
    if (t - previous > best.ms) best = { ms: t - previous, from: previous };
    previous = t;
  }
  return best;
};

/**
 * How long after `at` sends were accepted again: the first 200 to an attempt that started after `at` (an attempt
 * under way at `at` may have been stored before it).
 */
export const acceptedAgainAfter = (sends: readonly SendRecord[], at: number): number | null => {
  const after = sends.filter((s) => s.acceptedAt !== undefined && s.lastAttemptAt >= at).map((s) => s.acceptedAt! - at);
  return after.length > 0 ? Math.min(...after) : null;
};
