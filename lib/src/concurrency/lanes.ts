/**
 * Runs tasks one at a time per key (an instance's deliveries keep their order) and in parallel across keys, with
 * at most `concurrency` tasks running in all. A slow key only ever holds up itself.
 */
export class Lanes {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly queued = new Map<string, number>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly concurrency: number) {
    // With no slot every task waits for one forever and nothing says why: refused here, not discovered in production.
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`Lanes needs a concurrency of at least 1, got ${concurrency}`);
  }

  /** Tasks waiting or running for `key`. */
  size(key: string): number {
    return this.queued.get(key) ?? 0;
  }

  /** Tasks waiting or running in all. */
  get total(): number {
    let sum = 0;
    for (const n of this.queued.values()) sum += n;
    return sum;
  }

  push(key: string, task: () => Promise<void>): void {
    this.queued.set(key, this.size(key) + 1);
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.withSlot(task))
      .catch(() => undefined)
      .finally(() => {
        const left = this.size(key) - 1;
        if (left > 0) this.queued.set(key, left);
        else this.queued.delete(key);
        if (this.tails.get(key) === next) this.tails.delete(key);
      });
    this.tails.set(key, next);
  }

  /** Whether no task is queued or running now. */
  get isIdle(): boolean {
    return this.tails.size === 0;
  }

  /** Resolves when the tasks pushed so far for `key` have finished (never rejects: a task's failure is its own). */
  settled(key: string): Promise<void> {
    return this.tails.get(key) ?? Promise.resolve();
  }

  /** Resolves when every task pushed so far has finished. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }

  private async withSlot(task: () => Promise<void>): Promise<void> {
    if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}
