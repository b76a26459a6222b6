/**
 * Lets a repeated log line through at most once per `intervalMs` per key, and tells it how many were held back
 * since: a dead peer makes every request fail the same way (seen: 2,800 identical warnings in 10 s after a
 * sessions replica was killed), which buries everything else in the log.
 */
export class LogThrottle {
  private readonly last = new Map<string, { at: number; held: number }>();

  constructor(private readonly intervalMs: number) {}

  /** Calls `log` (with the count held back since the last line) when the key's interval has passed. */
  maybe(key: string, log: (heldBack: number) => void): void {
    const now = Date.now();
    const entry = this.last.get(key);
    if (entry && now - entry.at < this.intervalMs) {
      entry.held++;
      return;
    }
    this.last.set(key, { at: now, held: 0 });
    if (this.last.size > 10_000) this.last.delete(this.last.keys().next().value as string);
    log(entry?.held ?? 0);
  }
}
