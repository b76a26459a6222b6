/** How often a send whose receipt never comes is handed out again before it is left alone (logged). */
const MAX_UNCONFIRMED_HANDOUTS = 5;

/**
 * This replica's part in sends, by message stream: the ones in its lanes now, and the ones it sent or failed whose
 * `MessageSent`/`MessageFailed` the send ledger may not show yet (a receipt is recorded after the platform's ack).
 * Neither is sent again from here while it is listed; a send handed to the platform whose receipt does not come within
 * `confirmWithinMs` is listed no more, so the next sweep hands it out again (see `prune`).
 */
export class LocalSends {
  private readonly inFlight = new Set<string>();
  /** Settled here, by stream: when it was handed to the platform (Infinity: failed here, or handed out too often). */
  private readonly settled = new Map<string, number>();
  /** Sends handed out again for want of a receipt, by stream: how often. */
  private readonly unconfirmed = new Map<string, number>();

  constructor(private readonly confirmWithinMs: number) {}

  /** Takes the send for this replica's lane; false when it is already in one or settled here. */
  take(stream: string): boolean {
    if (this.inFlight.has(stream) || this.settled.has(stream)) return false;
    this.inFlight.add(stream);
    return true;
  }

  /** `awaitsReceipt`: handed to the platform, so handed out again if no receipt comes (see `prune`); else settled for good. */
  release(stream: string, settled: boolean, awaitsReceipt = false, now = Date.now()): void {
    this.inFlight.delete(stream);
    if (settled) this.settled.set(stream, awaitsReceipt ? now : Infinity);
  }

  isSettled(stream: string): boolean {
    return this.settled.has(stream);
  }

  busy(stream: string): boolean {
    return this.inFlight.has(stream) || this.settled.has(stream);
  }

  /**
   * Forgets settled sends the ledger no longer lists as queued, and those it still lists `confirmWithinMs` after they
   * settled: a platform that takes a message (Baileys resolves on the socket write) and drops the connection before
   * its ack records no receipt, and the send would stay queued, neither sent again nor failed, until a restart.
   * Handed out again it keeps its message id, which the platform dedupes and acknowledges again. After
   * MAX_UNCONFIRMED_HANDOUTS in vain (its receipts cannot be recorded) it is left alone, not handed out every minute.
   * Returns what it did to which sends, for the log.
   */
  prune(stillQueued: (stream: string) => boolean, now = Date.now()): { again: string[]; leftAlone: string[] } {
    const again: string[] = [];
    const leftAlone: string[] = [];
    for (const [stream, at] of this.settled) {
      if (!stillQueued(stream)) {
        this.settled.delete(stream);
        this.unconfirmed.delete(stream);
      } else if (now - at >= this.confirmWithinMs) {
        const handouts = (this.unconfirmed.get(stream) ?? 0) + 1;
        if (handouts > MAX_UNCONFIRMED_HANDOUTS) {
          this.settled.set(stream, Infinity);
          leftAlone.push(stream);
          continue;
        }
        this.unconfirmed.set(stream, handouts);
        this.settled.delete(stream);
        again.push(stream);
      }
    }
    for (const stream of this.unconfirmed.keys())
      if (!this.settled.has(stream) && !this.inFlight.has(stream) && !stillQueued(stream)) this.unconfirmed.delete(stream);
    return { again, leftAlone };
  }
}
