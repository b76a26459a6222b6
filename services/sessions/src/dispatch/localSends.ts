/**
 * This replica's part in sends, by message stream: the ones in its lanes now, and the ones it sent or failed whose
 * `MessageSent`/`MessageFailed` the send ledger may not show yet (a receipt is recorded after the platform's ack).
 * Neither is sent again from here while it is listed.
 */
export class LocalSends {
  private readonly inFlight = new Set<string>();
  private readonly settled = new Set<string>();

  /** Takes the send for this replica's lane; false when it is already in one or settled here. */
  take(stream: string): boolean {
    if (this.inFlight.has(stream) || this.settled.has(stream)) return false;
    this.inFlight.add(stream);
    return true;
  }

  release(stream: string, settled: boolean): void {
    this.inFlight.delete(stream);
    if (settled) this.settled.add(stream);
  }

  isSettled(stream: string): boolean {
    return this.settled.has(stream);
  }

  busy(stream: string): boolean {
    return this.inFlight.has(stream) || this.settled.has(stream);
  }

  /** Forgets settled sends the ledger no longer lists as queued. */
  prune(stillQueued: (stream: string) => boolean): void {
    for (const stream of this.settled) if (!stillQueued(stream)) this.settled.delete(stream);
  }
}
