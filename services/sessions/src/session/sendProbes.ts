/** One instance's sends, by their place in the order they were handed to its connection (on this replica). */
interface Handed {
  /** How many were handed over: the place of the latest. */
  count: number;
  /** The place of each send whose outcome (taken or refused) has not come yet, by message id. */
  pending: Map<string, number>;
  /** Sends placed after this one are probes of the restriction known; null while none is known. */
  bar: number | null;
}

/**
 * Which sends show, once the platform takes them, that a restriction of the account's sends is over (probes): those
 * handed to the connection after the restriction was last reported, or, for one an earlier connection recorded, while
 * it was known. A send handed over before proves nothing: the platform may have taken it before the restriction began
 * (the send just before the one refused with 463), and its `sent` receipt can still come after the report (Baileys
 * maps the ack's id back to ours first; the sandbox acknowledges after a delay, on the next connection if this one
 * drops). So probes are told by their place in the hand-over order, not by when their receipts come.
 */
export class SendProbes {
  private readonly instances = new Map<string, Handed>();

  /** A send is handed to the instance's connection; `restricted`: a restriction of its sends is known now. */
  handed(instanceId: string, messageId: string, restricted: boolean): void {
    const handed = this.of(instanceId);
    if (!restricted) handed.bar = null;
    else handed.bar ??= handed.count;
    handed.pending.set(messageId, ++handed.count);
    // A send whose outcome never comes (its connection dropped first) is forgotten in time, as no probe.
    if (handed.pending.size > PENDING_KEPT) handed.pending.delete(handed.pending.keys().next().value as string);
  }

  /** The connection reported a restriction (again, or with a new end): the sends handed so far are no probes of it. */
  reported(instanceId: string): void {
    const handed = this.of(instanceId);
    handed.bar = handed.count;
  }

  /** The send's outcome came (taken or refused): whether it was a probe. */
  settle(instanceId: string, messageId: string): boolean {
    const handed = this.instances.get(instanceId);
    const place = handed?.pending.get(messageId);
    if (!handed || place === undefined) return false;
    handed.pending.delete(messageId);
    return handed.bar !== null && place > handed.bar;
  }

  /** The restriction is over: no send is a probe until one is known again. */
  over(instanceId: string): void {
    const handed = this.instances.get(instanceId);
    if (handed) handed.bar = null;
  }

  /** Forgets the instance (it was reset: its sends are gone). */
  forget(instanceId: string): void {
    this.instances.delete(instanceId);
  }

  private of(instanceId: string): Handed {
    let handed = this.instances.get(instanceId);
    if (!handed) {
      handed = { count: 0, pending: new Map(), bar: null };
      this.instances.set(instanceId, handed);
    }
    return handed;
  }
}

/** Sends awaiting their outcome remembered per instance (an outcome comes within seconds of the hand-over). */
const PENDING_KEPT = 1_000;
