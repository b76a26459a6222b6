/**
 * The sandbox's account restrictions (`/v1/sandbox/restrict`), per instance, in this process: like WhatsApp, a
 * restricted account's sends are refused (463, `account_restricted`) until the end, if one was named, or the lifting.
 */
export class SandboxRestrictions {
  private readonly until = new Map<string, number | null>();
  /** Instances whose connection was told of a restriction: a send taken afterwards tells it the restriction is over. */
  private readonly told = new Set<string>();

  tell(instanceId: string): void {
    this.told.add(instanceId);
  }

  /** Forgets the telling; answers whether the connection had been told (and must hear that it is over). */
  untell(instanceId: string): boolean {
    return this.told.delete(instanceId);
  }

  set(instanceId: string, until: number | null): void {
    this.until.set(instanceId, until);
  }

  /** Lifts the instance's restriction; answers whether one held. */
  lift(instanceId: string, now = Date.now()): boolean {
    const held = this.holds(instanceId, now);
    this.until.delete(instanceId);
    return held;
  }

  holds(instanceId: string, now = Date.now()): boolean {
    if (!this.until.has(instanceId)) return false;
    const until = this.until.get(instanceId) ?? null;
    if (until !== null && until <= now) {
      this.until.delete(instanceId);
      return false;
    }
    return true;
  }

  /** The end of the instance's restriction as ISO time, null when unknown. */
  endOf(instanceId: string): string | null {
    const until = this.until.get(instanceId) ?? null;
    return until === null ? null : new Date(until).toISOString();
  }
}
