import { conflict, unavailable, type Logger } from '@wagw/lib';
import type { Connection, Connector } from '../connector/port';
import type { InstanceRegistry } from '../registry/instanceRegistry';
import { handleConnectionEvent, type ConnectionEventEffects } from './connectionEvents';
import type { FactWriter } from './factWriter';
import { InstanceResets } from './instanceResets';
import { assertQrCanCome, pairingCodeOver, waitForQr } from './qrWait';
import { reconnectDelayMs } from './reconnectPolicy';
import { SendRestrictions } from './sendRestrictions';
import { newSession, wake, type Session } from './session';
import { DEFAULT_SESSION_OPTIONS, type Leases, type SessionOptions } from './sessionOptions';
import { UnheldSweep } from './unheldSweep';

/**
 * The platform connections of the instances whose lease this replica holds (one per instance in the cluster):
 * starts one for a QR code, turns what it reports into events (lifecycle on the instance stream, receipts and
 * inbound messages on message streams), reconnects a linked instance with backoff when it drops, takes over
 * linked instances nobody holds (a replica died or shut down), and stops at once a connection whose lease was lost.
 * Callers hold the lease before `getQr`/`reconnect` (the owner router sees to it).
 */
export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  /** Starts under way by `startShared`, by instance. */
  private readonly starting = new Map<string, Promise<Session>>();
  /** Instances whose connection `reconnect` is replacing: between the old one's close and the new one's start. */
  private readonly restarting = new Set<string>();
  private closing = false;
  private claimTimer: NodeJS.Timeout | null = null;
  private claiming: Promise<void> = Promise.resolve();
  private readonly restrictions: SendRestrictions;
  private readonly resets: InstanceResets;
  private readonly unheld: UnheldSweep;
  private readonly eventEffects: ConnectionEventEffects;

  /** `facts` records what the platform reports: in order per instance, retried while NATS is unavailable. */
  constructor(
    private readonly connector: Connector,
    private readonly facts: FactWriter,
    private readonly registry: InstanceRegistry,
    private readonly ownership: Leases,
    private readonly logger: Logger,
    options: SessionOptions = DEFAULT_SESSION_OPTIONS,
    private readonly random: () => number = Math.random,
  ) {
    this.restrictions = new SendRestrictions(facts, registry, logger, options.restrictedPauseMs);
    this.resets = new InstanceResets(registry, ownership, logger, (instanceId) => this.wipe(instanceId));
    this.unheld = new UnheldSweep(
      registry,
      ownership,
      facts,
      this.resets,
      {
        closing: () => this.closing,
        idle: (instanceId) => !this.sessions.has(instanceId) && !this.starting.has(instanceId) && !this.restarting.has(instanceId),
        start: (instanceId) => this.startShared(instanceId),
        releaseIfIdle: (instanceId) => this.releaseIfIdle(instanceId),
      },
      logger,
    );
    this.eventEffects = {
      facts,
      restrictions: this.restrictions,
      logger,
      autoMarkRead: options.autoMarkRead,
      current: (session) => this.sessions.get(session.instanceId) === session,
      purge: (instanceId) => connector.purge(instanceId),
      scheduleReconnect: (session) => this.scheduleReconnect(session),
      endAfterFacts: (session) => this.end(session, true),
    };
    registry.onReset((instanceId) => {
      this.restrictions.forget(instanceId);
      void this.reset(instanceId);
    });
    ownership.onLost((instanceId) => void this.stop(instanceId));
    ownership.onFreed((instanceId) => void this.unheld.claim(instanceId));
  }

  /** Sweeps what no live replica holds (`UnheldSweep`), now and every `everyMs`. */
  startClaiming(everyMs: number): void {
    const sweep = (): void => {
      // A sweep that fails must not end the chain: every later one would be skipped.
      this.claiming = this.claiming
        .then(() => this.unheld.run())
        .catch((error: unknown) => this.logger.warn({ err: error }, 'sweeping unheld instances failed; the next sweep retries'));
    };
    sweep();
    this.claimTimer = setInterval(sweep, everyMs);
    this.claimTimer.unref();
  }

  /** How many connections this replica runs. */
  get size(): number {
    return this.sessions.size;
  }

  /** The open, connected connection of an instance, or null. */
  connected(instanceId: string): Connection | null {
    const session = this.sessions.get(instanceId);
    return session?.status === 'connected' ? session.connection : null;
  }

  /** Whether the instance's sends wait now because WhatsApp restricted the account (`SendRestrictions`). */
  sendsPaused(instanceId: string): boolean {
    return this.restrictions.paused(instanceId, this.sessions.get(instanceId));
  }

  /** A message is handed to the instance's connection: who it went to (for its receipts), whether it probes a restriction. */
  sending(instanceId: string, messageId: string, to: string): void {
    this.facts.sending(messageId, to);
    this.restrictions.handed(instanceId, this.sessions.get(instanceId), messageId);
  }

  /** The current QR code, starting a connection when none runs; waits at most `waitMs` for it. */
  async getQr(instanceId: string, waitMs: number): Promise<string> {
    const running = this.sessions.get(instanceId);
    // A refusal gives back the free lease the owner router took for this call (see `reconnect`).
    await this.refusingIdle(instanceId, () => assertQrCanCome(running, this.registry.get(instanceId)));
    const session = running ?? (await this.startShared(instanceId));
    return waitForQr(session, () => this.sessions.get(instanceId) === session, waitMs);
  }

  /**
   * A pairing code for `number`, the alternative to the QR code: the same connection, states and errors as
   * `getQr` (WhatsApp takes a pairing request only once the connection shows QR codes).
   */
  async getPairingCode(instanceId: string, number: string, waitMs: number): Promise<string> {
    await this.getQr(instanceId, waitMs);
    return pairingCodeOver(this.sessions.get(instanceId), number, (error) => this.logger.warn({ err: error, instanceId }, 'the platform gave no pairing code'));
  }

  /** Restarts the connection of a linked instance. */
  async reconnect(instanceId: string): Promise<void> {
    // The owner router took the free lease for this call: with nothing to run, it would be renewed for good.
    await this.refusingIdle(instanceId, () => {
      if (!this.registry.get(instanceId)?.linkedNumber) throw conflict('not_linked', 'The instance is not linked: scan a QR code first (get_qrcode)');
    });
    // Not idle while the old connection closes (Baileys may take seconds): the unheld sweep would give the lease
    // back under it, and the start would answer owner_changed.
    this.restarting.add(instanceId);
    try {
      await this.stop(instanceId);
      await this.start(instanceId);
    } finally {
      this.restarting.delete(instanceId);
    }
  }

  /**
   * reset_instance: logs the device out where linked, wipes its stored credentials, forgets the session. Done by
   * the replica holding the lease, or by whichever takes the free lease first (every replica sees the reset; see
   * `InstanceResets`).
   */
  reset(instanceId: string): Promise<void> {
    return this.resets.request(instanceId);
  }

  /** Closes every connection (keeping the links) and gives the leases up, so other replicas take over at once. */
  async closeAll(): Promise<void> {
    this.closing = true;
    if (this.claimTimer) clearInterval(this.claimTimer);
    await this.claiming;
    // A QR code on screen dies with its connection, and no replica takes an unlinked instance over: recorded as a
    // disconnect (the instance back to `created`, `instance.disconnected` with reconnecting false), not `qr` for good.
    for (const session of this.sessions.values()) {
      if (this.registry.isLinked(session.instanceId)) continue;
      this.facts.connection(session.instanceId, { type: 'disconnected', reason: 'server_shutdown' }, session.resets, now());
    }
    await Promise.all([...this.sessions.keys()].map((id) => this.stop(id)));
    await this.ownership.stop();
    // Facts still being retried get a moment to land (NATS back within it); the shutdown deadline bounds the rest.
    await Promise.race([this.facts.idle(), new Promise((resolve) => setTimeout(resolve, FACTS_DRAIN_MS).unref())]);
  }

  /**
   * Ends a session for good here: no connection, no lease (another replica, or a later request, may start one).
   * `factsFirst`: the lease goes once the session's last fact (failed, logged out) is in the log and the registry
   * (bounded by FACTS_DRAIN_MS). Freed at once, the claim of the freed lease read the instance as linked still and
   * connected it again from its stored link: a 403'd account was logged in again within 2.5 s on a loaded machine.
   */
  private async end(session: Session, factsFirst = false): Promise<void> {
    const { instanceId } = session;
    this.detach(session);
    if (factsFirst) {
      const settled = this.facts.connectionFactsStored(instanceId).then(() => this.registry.reach(instanceId, FACTS_DRAIN_MS));
      await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, FACTS_DRAIN_MS).unref())]);
    }
    await this.releaseIfIdle(instanceId);
  }

  /**
   * Takes a session out of this replica: out of the map (when it is the instance's current one), its reconnect timer
   * cleared, and a get_qrcode waiting on it answered now, with its reason if it has one, not at its deadline.
   */
  private detach(session: Session): void {
    if (this.sessions.get(session.instanceId) === session) this.sessions.delete(session.instanceId);
    if (session.reconnectTimer) clearTimeout(session.reconnectTimer);
    wake(session);
  }

  /** Logs out the instance's connection here, if any, and wipes its stored credentials (a reset). */
  private async wipe(instanceId: string): Promise<void> {
    const session = this.sessions.get(instanceId);
    if (session) this.detach(session);
    await session?.connection?.logout().catch((error: unknown) => this.logger.warn({ err: error, instanceId }, 'logout failed'));
    await this.connector.purge(instanceId);
  }

  /** Runs `check`; when it refuses the call, gives the lease up first if nothing here needs it (`releaseIfIdle`). */
  private async refusingIdle(instanceId: string, check: () => void): Promise<void> {
    try {
      check();
    } catch (error) {
      await this.releaseIfIdle(instanceId);
      throw error;
    }
  }

  /** Gives the lease up when nothing here needs it: no connection runs, no reset is under way (it releases its own). */
  private async releaseIfIdle(instanceId: string): Promise<void> {
    if (!this.sessions.has(instanceId) && !this.resets.busy(instanceId)) await this.ownership.release(instanceId);
  }

  /**
   * One start at a time per instance for those who only need a session (get_qrcode, a take-over): a second caller
   * meanwhile gets the first one's. A start waits for a reset under way before its session shows, so two get_qrcode
   * at once both started one, and the first was closed as it opened (its caller got 503 qr_timeout).
   */
  private startShared(instanceId: string): Promise<Session> {
    const under = this.starting.get(instanceId);
    if (under) return under;
    const started = this.start(instanceId).finally(() => this.starting.delete(instanceId));
    this.starting.set(instanceId, started);
    return started;
  }

  /**
   * Starts a connection; the caller holds the lease, which a failed start gives up (the claim sweep tries again).
   * `reconnectAttempts`: a reconnect's count so far, carried to the new session so the backoff grows until one connects.
   */
  private async start(instanceId: string, reconnectAttempts = 0): Promise<Session> {
    const session = newSession(instanceId);
    session.reconnectAttempts = reconnectAttempts;
    try {
      await this.resets.settle(instanceId);
      // Every start follows a taken lease; lost since (a take-over waiting for the registry, NATS failing over), no
      // stop found a session to end, and one set now would run unleased beside the new holder's.
      if (!this.ownership.owns(instanceId)) throw unavailable('owner_changed', 'Another replica runs this instance now; try again');
      this.sessions.set(instanceId, session);
      session.resets = await this.facts.resetsOf(instanceId);
      this.facts.connection(instanceId, { type: 'connecting' }, session.resets, now());
      const connection = await this.connector.connect(instanceId, (event) => void handleConnectionEvent(session, event, this.eventEffects));
      if (this.sessions.get(instanceId) !== session) {
        // Stopped while it was being opened (lease lost, reset, replaced by another start): no one else would close it.
        await connection.close();
        wake(session);
        return session;
      }
      session.connection = connection;
      return session;
    } catch (error) {
      await this.end(session);
      throw error;
    }
  }

  private async stop(instanceId: string): Promise<void> {
    const session = this.sessions.get(instanceId);
    if (!session) return;
    this.detach(session);
    await session.connection?.close();
  }

  private scheduleReconnect(session: Session): void {
    if (this.closing) return;
    if (!this.registry.get(session.instanceId)?.linkedNumber || !this.ownership.owns(session.instanceId)) {
      void this.end(session);
      return;
    }
    session.status = 'connecting';
    const delay = reconnectDelayMs(++session.reconnectAttempts, this.random);
    session.reconnectTimer = setTimeout(() => {
      if (this.sessions.get(session.instanceId) !== session) return;
      // Not left `connecting` for good: the instance is idle here again, for a claim or a get_qrcode.
      if (!this.ownership.owns(session.instanceId)) return void this.end(session);
      this.sessions.delete(session.instanceId);
      // A failed start gives the lease up itself.
      this.start(session.instanceId, session.reconnectAttempts).catch((error: unknown) => {
        this.logger.warn({ err: error, instanceId: session.instanceId }, 'reconnect failed; the next sweep retries');
      });
    }, delay);
    session.reconnectTimer.unref();
  }
}

const now = (): string => new Date().toISOString();

/** How long a clean shutdown waits for facts still being retried. */
const FACTS_DRAIN_MS = 5_000;
