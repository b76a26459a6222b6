/** Sends awaiting their outcome remembered per restricted instance (an outcome comes within seconds of the hand-over). */
const PROBES_KEPT = 1_000;

/**
 * Which sends show, once the platform takes them, that a restriction of the account's sends is over (probes): those
 * handed to the connection after the restriction was last reported, or, for one an earlier connection recorded, while
 * it was known. A send handed over before proves nothing: the platform may have taken it before the restriction began
 * (the send just before the one refused with 463), and its `sent` receipt can still come after the report (Baileys
 * maps the ack's id back to ours first; the sandbox acknowledges after a delay, on the next connection if this one
 * drops). So probes are told by when they were handed over, not by when their receipts come. Only instances with a
 * restriction known keep anything here, and only until it is over.
 */
export class SendProbes {
  /** By instance with a restriction known: the sends handed over since it was last reported, awaiting their outcome. */
  private readonly probes = new Map<string, Set<string>>();

  /** A send is handed to the instance's connection; `restricted`: a restriction of its sends is known now. */
  handed(instanceId: string, messageId: string, restricted: boolean): void {
    if (!restricted) {
      this.probes.delete(instanceId);
      return;
    }
    let sends = this.probes.get(instanceId);
    if (!sends) {
      sends = new Set();
      this.probes.set(instanceId, sends);
    }
    sends.add(messageId);
    // A send whose outcome never comes (its connection dropped first) is forgotten in time, as no probe.
    if (sends.size > PROBES_KEPT) sends.delete(sends.values().next().value as string);
  }

  /**
   * No send handed over so far is a probe: the connection reported a restriction (again, or with a new end), the
   * restriction is over, or the instance was reset (its sends are gone).
   */
  clear(instanceId: string): void {
    this.probes.delete(instanceId);
  }

  /** The send's outcome came (taken or refused): whether it was a probe. */
  settle(instanceId: string, messageId: string): boolean {
    return this.probes.get(instanceId)?.delete(messageId) ?? false;
  }
}
