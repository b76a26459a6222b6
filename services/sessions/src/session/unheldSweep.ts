import { REPLICA_LOST, type Logger } from '@wagw/lib';
import type { InstanceRegistry } from '../registry/instanceRegistry';
import type { FactWriter } from './factWriter';
import type { InstanceResets } from './instanceResets';
import type { Leases } from './sessionOptions';

/** What the sweep needs of the replica's sessions (the session manager). */
export interface SweptSessions {
  /** The replica is shutting down: nothing more is taken. */
  closing(): boolean;
  /** No connection of the instance runs or starts here. */
  idle(instanceId: string): boolean;
  /** Starts the instance's connection (or joins the start under way); a failed start gives the lease up itself. */
  start(instanceId: string): Promise<unknown>;
  /** Gives the instance's lease up when nothing here needs it. */
  releaseIfIdle(instanceId: string): Promise<void>;
}

/**
 * What no live replica holds, swept by each replica (every LEASE_CLAIM_EVERY_MS, and when a lease is freed): resets
 * still to carry out, linked instances to take over (connected again from their stored link), and QR codes left on
 * the screen of a replica that died (`endAbandoned`). Whichever replica takes an instance's free lease first acts.
 */
export class UnheldSweep {
  /** Instances a claim is taking over now: their lease is held while the claim reaches the log, before a session shows. */
  private readonly claiming = new Set<string>();
  /** Leases held here with nothing running under them at the last sweep. */
  private unused = new Set<string>();

  constructor(
    private readonly registry: InstanceRegistry,
    private readonly ownership: Leases,
    private readonly facts: FactWriter,
    private readonly resets: InstanceResets,
    private readonly sessions: SweptSessions,
    private readonly logger: Logger,
  ) {}

  async run(): Promise<void> {
    const { sessions, ownership } = this;
    await this.resets.sweep(() => sessions.closing());
    for (const instanceId of this.registry.linkedInstances()) {
      if (sessions.closing()) return;
      if (ownership.isFree(instanceId)) await this.claim(instanceId);
    }
    for (const instanceId of this.registry.awaitingScan()) {
      if (sessions.closing()) return;
      if (ownership.isFree(instanceId)) await this.endAbandoned(instanceId);
    }
    await this.releaseUnused();
  }

  /**
   * Gives back a lease held here with nothing running under it at two sweeps in a row: renewed for good, it kept every
   * replica from taking its instance (connecting it, sending its queued messages) again. Each path that takes a lease
   * gives it back when it ends; this catches one that does not, as a failing take-over did (`claim`).
   */
  private async releaseUnused(): Promise<void> {
    const unusedNow = new Set<string>();
    for (const instanceId of this.ownership.ownedKeys()) {
      if (!this.sessions.idle(instanceId) || this.claiming.has(instanceId) || this.resets.busy(instanceId)) continue;
      if (!this.unused.has(instanceId)) {
        unusedNow.add(instanceId);
        continue;
      }
      this.logger.warn({ instanceId }, 'a lease held here had nothing running under it for a whole sweep; given back');
      await this.sessions.releaseIfIdle(instanceId);
    }
    this.unused = unusedNow;
  }

  /** Takes a free linked instance and connects it from its stored credentials (no QR code). */
  async claim(instanceId: string): Promise<void> {
    if (this.sessions.closing() || !this.sessions.idle(instanceId) || !this.registry.isLinked(instanceId)) return;
    this.claiming.add(instanceId);
    try {
      if (!(await this.ownership.acquire(instanceId))) return;
      // The registry may lag the log (this replica's, or one whose owner just ended the instance as failed or logged
      // out and freed it): linked as of the log's end, or let go again.
      if (!(await this.registry.reach(instanceId, CLAIM_REACH_MS)) || !this.registry.isLinked(instanceId)) {
        await this.sessions.releaseIfIdle(instanceId);
        return;
      }
      this.logger.info({ instanceId }, 'taking over a linked instance');
      await this.sessions.start(instanceId);
    } catch (error) {
      // Given back, or this replica would renew a lease with nothing running under it, and no sweep (here or on
      // another replica) would ever take the instance again: a compose drill's instance sent nothing for a minute
      // after reaching the log timed out while NATS elected a leader.
      await this.sessions.releaseIfIdle(instanceId);
      this.logger.warn({ err: error, instanceId }, 'taking over an instance failed; its lease is given back and the next sweep retries');
    } finally {
      this.claiming.delete(instanceId);
    }
  }

  /**
   * An unlinked instance left `qr` (or `connecting`) by a replica that died without a shutdown (which records it):
   * recorded disconnected (`replica_lost`; back to `created`) under its lease, so a get_qrcode starting it meanwhile
   * comes after it. Its decider records it once, only while it still awaits a scan.
   */
  private async endAbandoned(instanceId: string): Promise<void> {
    if (this.sessions.closing() || !this.sessions.idle(instanceId)) return;
    try {
      if (!(await this.ownership.acquire(instanceId))) return;
      const resets = this.registry.stateOf(instanceId)?.resets;
      if (this.sessions.idle(instanceId) && resets !== undefined) {
        this.facts.connection(instanceId, { type: 'disconnected', reason: REPLICA_LOST }, resets, new Date().toISOString());
      }
      await this.sessions.releaseIfIdle(instanceId);
    } catch (error) {
      this.logger.warn({ err: error, instanceId }, 'ending an abandoned QR code failed; the next sweep retries');
    }
  }
}

/** How long a take-over waits for the registry to reach the instance's last event before it gives the lease back. */
const CLAIM_REACH_MS = 2_000;
