import type { ConnectionEvent } from '../port';

/**
 * The sandbox's account restrictions (`/v1/sandbox/restrict`), per instance, in this process: like WhatsApp, a
 * restricted account's sends are refused (463, `account_restricted`) until the end, if one was named, or the lifting.
 * A send taken after the end says nothing of it here: its `sent` receipt tells the session (`SendRestrictions`).
 */
export class SandboxRestrictions {
  private readonly until = new Map<string, number | null>();
  /** Instances whose connection was told of a restriction since the platform last took one of their sends. */
  private readonly told = new Set<string>();

  /** What the instance's connection reports of its restriction (it is told once more at each refused send). */
  announce(instanceId: string): ConnectionEvent {
    this.told.add(instanceId);
    return { type: 'restricted', until: this.endOf(instanceId) };
  }

  /**
   * A send was taken: what the connection was told is behind it, so a lifting after this is no news. Whether the send
   * ended the restriction is for the session to conclude from its `sent` receipt; nothing is reported here.
   */
  taken(instanceId: string): void {
    this.told.delete(instanceId);
  }

  set(instanceId: string, until: number | null): void {
    this.until.set(instanceId, until);
  }

  /** Lifts the instance's restriction: what its connection reports if it had been told of one, else null. */
  lift(instanceId: string): ConnectionEvent | null {
    this.until.delete(instanceId);
    return this.told.delete(instanceId) ? { type: 'unrestricted' } : null;
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
