/** Slack after an idle spell: at most this much time's worth of work goes out at once. */
const BURST_MS = 50;

/** Spaces work out to at most `perSecond` items a second (a replay's pace, so it never crowds out live deliveries). */
export class Pacer {
  private readonly intervalMs: number;
  private due = 0;

  constructor(perSecond: number) {
    this.intervalMs = 1_000 / Math.max(perSecond, 0.001);
  }

  /** Resolves when the next item may go. */
  async wait(): Promise<void> {
    const now = performance.now();
    this.due = Math.max(this.due + this.intervalMs, now - BURST_MS);
    if (this.due > now) await new Promise((resolve) => setTimeout(resolve, this.due - now));
  }
}
