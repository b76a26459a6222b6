/** One send this replica is accepting: its commit's sequence once appended (null while the append is under way). */
interface Accept {
  instanceId: string;
  messageId: string;
  sequence: number | null;
}

/** An accept counted against its instance's quotas until its commit is in the send ledger, or released. */
export interface Reservation {
  /** Appended as `sequence`: counted until the ledger has folded it in. */
  appended(sequence: number): void;
  /** Not a new send after all (refused, failed, or a repeat the ledger counts already): no longer counted. */
  release(): void;
}

/** What a repeat of an accept under way holds: nothing (the first one counts). */
export const NO_RESERVATION: Reservation = { appended: () => undefined, release: () => undefined };

/**
 * Sends this replica accepted that its send ledger does not show yet, per instance. The ledger is fed from the log and
 * lags each append by a moment, so quota checks made from it alone let a burst of parallel sends through: 30 at once
 * against a daily cap of 5 accepted 7 (a bug hunt, on one replica). A check counts these too; each is dropped once
 * the ledger has folded a commit at or after its own (`folded`: the sequence of the last commit the ledger applied,
 * commits coming in log order). Sends racing on other replicas are not seen here (README: quotas).
 */
export class UnfoldedAccepts {
  private readonly byInstance = new Map<string, Set<Accept>>();
  /** The same accepts by message id: a repeat racing its first (same Idempotency-Key) is not a second send. */
  private readonly byMessage = new Map<string, Accept>();

  constructor(private readonly folded: () => number) {}

  /** Counts one accept of the instance from now on (synchronously: the check and the count are one step). */
  reserve(instanceId: string, messageId: string): Reservation {
    const accept: Accept = { instanceId, messageId, sequence: null };
    let accepts = this.byInstance.get(instanceId);
    if (!accepts) {
      accepts = new Set();
      this.byInstance.set(instanceId, accepts);
    }
    accepts.add(accept);
    this.byMessage.set(messageId, accept);
    return {
      appended: (sequence) => {
        accept.sequence = sequence;
        if (sequence <= this.folded()) this.drop(accept);
      },
      release: () => this.drop(accept),
    };
  }

  /** Whether an accept of this message is under way or not yet folded. */
  holds(messageId: string): boolean {
    const accept = this.byMessage.get(messageId);
    if (!accept) return false;
    if (accept.sequence === null || accept.sequence > this.folded()) return true;
    this.drop(accept);
    return false;
  }

  /** The instance's accepts not in the ledger yet. */
  count(instanceId: string): number {
    const accepts = this.byInstance.get(instanceId);
    if (!accepts) return 0;
    const folded = this.folded();
    for (const accept of accepts) if (accept.sequence !== null && accept.sequence <= folded) this.drop(accept);
    return this.byInstance.get(instanceId)?.size ?? 0;
  }

  private drop(accept: Accept): void {
    const accepts = this.byInstance.get(accept.instanceId);
    accepts?.delete(accept);
    if (accepts?.size === 0) this.byInstance.delete(accept.instanceId);
    if (this.byMessage.get(accept.messageId) === accept) this.byMessage.delete(accept.messageId);
  }
}
