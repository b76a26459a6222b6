import type { ConnectionEvent } from '../port';

/**
 * The sandbox's account restrictions (`/v1/sandbox/restrict`), per instance, in this process: like WhatsApp, a
 * restricted account's sends are refused (463, `account_restricted`) until the end, if one was named, or the lifting.
 */
export class SandboxRestrictions {
  private readonly until = new Map<string, number | null>();
  /** Instances whose connection was told of a restriction: a send taken afterwards tells it the restriction is over. */
  private readonly told = new Set<string>();

  /** What the instance's connection reports of its restriction (it is told once more at each refused send). */
  announce(instanceId: string): ConnectionEvent {
    this.told.add(instanceId);
    return { type: 'restricted', until: this.endOf(instanceId) };
  }

  /** A send was taken: what the connection reports if it had been told of a restriction (it is over), else null. */
  taken(instanceId: string): ConnectionEvent | null {
    return this.told.delete(instanceId) ? { type: 'unrestricted' } : null;
  }

  set(instanceId: string, until: number | null): void {
    this.until.set(instanceId, until);
  }

  /** Lifts the instance's restriction: what its connection reports if it had been told of one, else null. */
  lift(instanceId: string): ConnectionEvent | null {
    this.until.delete(instanceId);
    return this.taken(instanceId);
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
