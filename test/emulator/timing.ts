/** Timers that never hold the process open and are all cleared at stop. */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();

  after(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.pending.add(timer);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  clear(): void {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }
}

interface Waiter<T> {
  predicate: (item: T) => boolean;
  resolve: (item: T) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const MAX_WAITERS = 100;

/** Promises for "the first item matching P", past or future, each with a time-out. */
export class Waiters<T> {
  private readonly waiting = new Set<Waiter<T>>();

  constructor(private readonly what: string) {}

  wait(existing: readonly T[], predicate: (item: T) => boolean, timeoutMs: number): Promise<T> {
    const found = existing.find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    if (this.waiting.size >= MAX_WAITERS) return Promise.reject(new Error(`too many pending waits for ${this.what}`));
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        predicate,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiting.delete(waiter);
          reject(new Error(`no ${this.what} matched within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      waiter.timer.unref();
      this.waiting.add(waiter);
    });
  }

  notify(item: T): void {
    for (const waiter of this.waiting) {
      if (!waiter.predicate(item)) continue;
      clearTimeout(waiter.timer);
      this.waiting.delete(waiter);
      waiter.resolve(item);
    }
  }

  rejectAll(error: Error): void {
    for (const waiter of this.waiting) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiting.clear();
  }
}
