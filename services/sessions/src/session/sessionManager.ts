import { randomUUID } from 'node:crypto';
import {
  conflict,
  instanceEvent,
  instanceStream,
  isVersionConflict,
  messageStream,
  unavailable,
  type EventStore,
  type InstanceEvent,
  type Logger,
  type Ownership,
} from '@wagw/lib';
import type { Connection, ConnectionEvent, Connector } from '../connector/port';
import type { InstanceRegistry } from '../registry/instanceRegistry';
import { FactRecorder } from './factRecorder';
import { inboundEvent, lifecycleEvents, receiptEvent } from './platformFacts';
import { reconnectDelayMs } from './reconnectPolicy';

type Status = 'connecting' | 'qr' | 'connected';

interface Session {
  instanceId: string;
  connection: Connection | null;
  status: Status;
  /** The current QR code: a secret, kept in memory only. */
  qr: string | null;
  qrIssued: boolean;
  waiters: Array<() => void>;
  reconnectAttempts: number;
  reconnectTimer: NodeJS.Timeout | null;
  /** Why the connection last ended (disconnected, logged out or failed): what get_qrcode answers if no QR came. */
  endReason: string | null;
}

/**
 * The platform connections of the instances whose lease this replica holds (one per instance in the cluster):
 * starts one for a QR code, turns what it reports into events (lifecycle on the instance stream, receipts and
 * inbound messages on message streams), reconnects a linked instance with backoff when it drops, takes over
 * linked instances nobody holds (a replica died or shut down), and stops at once a connection whose lease was lost.
 * Callers hold the lease before `getQr`/`reconnect` (the owner router sees to it).
 */
export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  /** Recipients of messages handed to the platform, for the receipts that follow. */
  private readonly recipients = new Map<string, string>();
  private closing = false;
  private claimTimer: NodeJS.Timeout | null = null;
  private claiming: Promise<void> = Promise.resolve();
  /** What the platform reports is recorded through it: in order per instance, retried while NATS is unavailable. */
  private readonly facts: FactRecorder;

  constructor(
    private readonly connector: Connector,
    private readonly events: EventStore,
    private readonly registry: InstanceRegistry,
    private readonly ownership: Ownership,
    private readonly logger: Logger,
    private readonly random: () => number = Math.random,
    facts?: FactRecorder,
  ) {
    this.facts = facts ?? new FactRecorder(logger);
    registry.onReset((instanceId) => void this.reset(instanceId));
    ownership.onLost((instanceId) => void this.stop(instanceId));
    ownership.onFreed((instanceId) => void this.claim(instanceId));
  }

  /** Takes over, now and every `everyMs`, the linked instances no live replica holds. */
  startClaiming(everyMs: number): void {
    const sweep = (): void => {
      this.claiming = this.claiming.then(async () => {
        for (const instanceId of this.registry.linkedInstances()) {
          if (this.closing) return;
          if (this.ownership.isFree(instanceId)) await this.claim(instanceId);
        }
      });
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

  /** Remembers who a message went to, so its receipts can say so. */
  sending(messageId: string, to: string): void {
    this.recipients.set(messageId, to);
    if (this.recipients.size > 100_000) this.recipients.delete(this.recipients.keys().next().value as string);
  }

  /** The current QR code, starting a connection when none runs; waits at most `waitMs` for it. */
  async getQr(instanceId: string, waitMs: number): Promise<string> {
    let session = this.sessions.get(instanceId);
    if (session?.status === 'connected') throw conflict('already_connected', 'The instance is connected; no QR code is needed');
    if (!session) session = await this.start(instanceId);
    const deadline = Date.now() + waitMs;
    while (!session.qr) {
      if (session.status === 'connected') throw conflict('already_connected', 'The instance is connected; no QR code is needed');
      const remaining = deadline - Date.now();
      if (this.sessions.get(instanceId) !== session && session.endReason) {
        throw unavailable('platform_connection_failed', `The connection to the platform ended before a QR code came (${session.endReason}); try again`);
      }
      if (remaining <= 0 || this.sessions.get(instanceId) !== session) {
        throw unavailable('qr_timeout', `No QR code from the platform within ${waitMs} ms; try again`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        session.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return session.qr;
  }

  /**
   * A pairing code for `number`, the alternative to the QR code: the same connection, states and errors as
   * `getQr` (WhatsApp takes a pairing request only once the connection shows QR codes).
   */
  async getPairingCode(instanceId: string, number: string, waitMs: number): Promise<string> {
    await this.getQr(instanceId, waitMs);
    const connection = this.sessions.get(instanceId)?.connection;
    if (!connection) throw unavailable('platform_connection_failed', 'The connection to the platform ended before a pairing code came; try again');
    try {
      return await connection.requestPairingCode(number);
    } catch (error) {
      this.logger.warn({ err: error, instanceId }, 'the platform gave no pairing code');
      throw unavailable('pairing_code_failed', 'The platform gave no pairing code; try again');
    }
  }

  /** Restarts the connection of a linked instance. */
  async reconnect(instanceId: string): Promise<void> {
    if (!this.registry.get(instanceId)?.linkedNumber) throw conflict('not_linked', 'The instance is not linked: scan a QR code first (get_qrcode)');
    await this.stop(instanceId);
    await this.start(instanceId);
  }

  /**
   * reset_instance: logs the device out where linked, wipes its stored credentials, forgets the session. Done by
   * the replica holding the lease, or by whichever takes the free lease first (every replica sees the reset).
   */
  async reset(instanceId: string): Promise<void> {
    try {
      if (!(await this.ownership.acquire(instanceId))) return;
      const session = this.sessions.get(instanceId);
      this.sessions.delete(instanceId);
      if (session?.reconnectTimer) clearTimeout(session.reconnectTimer);
      await session?.connection?.logout().catch((error: unknown) => this.logger.warn({ err: error, instanceId }, 'logout failed'));
      await this.connector.purge(instanceId);
      await this.ownership.release(instanceId);
    } catch (error) {
      this.logger.error({ err: error, instanceId }, 'resetting the session failed');
    }
  }

  /** Closes every connection (keeping the links) and gives the leases up, so other replicas take over at once. */
  async closeAll(): Promise<void> {
    this.closing = true;
    if (this.claimTimer) clearInterval(this.claimTimer);
    await this.claiming;
    await Promise.all([...this.sessions.keys()].map((id) => this.stop(id)));
    await this.ownership.stop();
    // Facts still being retried get a moment to land (NATS back within it); the shutdown deadline bounds the rest.
    await Promise.race([this.facts.idle(), new Promise((resolve) => setTimeout(resolve, FACTS_DRAIN_MS).unref())]);
  }

  /** Takes a free linked instance and connects it from its stored credentials (no QR code). */
  private async claim(instanceId: string): Promise<void> {
    if (this.closing || this.sessions.has(instanceId) || !this.registry.isLinked(instanceId)) return;
    try {
      if (!(await this.ownership.acquire(instanceId))) return;
      this.logger.info({ instanceId }, 'taking over a linked instance');
      await this.start(instanceId);
    } catch (error) {
      this.logger.warn({ err: error, instanceId }, 'taking over an instance failed; the next sweep retries');
      await this.ownership.release(instanceId);
    }
  }

  /** Ends a session for good here: no connection, no lease (another replica, or a later request, may start one). */
  private async end(session: Session): Promise<void> {
    if (this.sessions.get(session.instanceId) === session) this.sessions.delete(session.instanceId);
    if (session.reconnectTimer) clearTimeout(session.reconnectTimer);
    // A get_qrcode still waiting answers now, with the reason, rather than at its deadline.
    this.wake(session);
    if (!this.sessions.has(session.instanceId)) await this.ownership.release(session.instanceId);
  }

  private async start(instanceId: string): Promise<Session> {
    const session: Session = {
      instanceId,
      connection: null,
      status: 'connecting',
      qr: null,
      qrIssued: false,
      waiters: [],
      reconnectAttempts: 0,
      reconnectTimer: null,
      endReason: null,
    };
    this.sessions.set(instanceId, session);
    this.recordInstance(instanceId, [instanceEvent('InstanceConnecting', now(), {})]);
    session.connection = await this.connector.connect(instanceId, (event) => void this.handle(session, event));
    return session;
  }

  private async stop(instanceId: string): Promise<void> {
    const session = this.sessions.get(instanceId);
    this.sessions.delete(instanceId);
    if (!session) return;
    if (session.reconnectTimer) clearTimeout(session.reconnectTimer);
    await session.connection?.close();
  }

  private wake(session: Session): void {
    session.waiters.splice(0).forEach((wake) => wake());
  }

  /**
   * A connection event: the session's state changes here, at once and in order; what it means for the history
   * (`platformFacts.ts`, pure) is recorded behind the instance's earlier facts.
   */
  private async handle(session: Session, event: ConnectionEvent): Promise<void> {
    if (this.sessions.get(session.instanceId) !== session) return;
    const id = session.instanceId;
    const now = new Date().toISOString();
    const lifecycle = lifecycleEvents(event, { qrIssued: session.qrIssued, linkedNumber: this.registry.get(id)?.linkedNumber ?? null, now });
    if (lifecycle.length > 0) this.recordInstance(id, lifecycle);
    try {
      switch (event.type) {
        case 'qr':
          session.qr = event.qr;
          session.status = 'qr';
          session.qrIssued = true;
          this.wake(session);
          return;
        case 'connected':
          session.status = 'connected';
          session.qr = null;
          session.reconnectAttempts = 0;
          this.wake(session);
          return;
        case 'disconnected':
          session.qr = null;
          session.endReason = event.reason;
          this.wake(session);
          if (event.reason === 'qr_expired') await this.end(session);
          else this.scheduleReconnect(session);
          return;
        case 'logged_out':
        case 'failed':
          session.endReason = event.reason;
          this.wake(session);
          if (event.type === 'logged_out') await this.connector.purge(id);
          await this.end(session);
          return;
        case 'receipt': {
          const known = this.recipients.get(event.messageId);
          this.facts.record(id, `receipt ${event.status}`, async () => {
            const receipt = receiptEvent(event, known ?? (await this.recipientOf(id, event.messageId)), now);
            await this.events.append(messageStream(id, event.messageId), [receipt.event], { expectedVersion: 'any', commandId: receipt.commandId });
          });
          return;
        }
        case 'inbound': {
          const inbound = inboundEvent(id, event, now);
          this.facts.record(id, 'inbound message', () =>
            this.events.append(messageStream(id, inbound.messageId), [inbound.event], { expectedVersion: 0, commandId: `inbound-${inbound.messageId}` }).then(
              () => undefined,
              (error: unknown) => {
                // Already there: the platform delivered it twice, or an earlier attempt was stored.
                if (!isVersionConflict(error)) throw error;
              },
            ),
          );
          return;
        }
      }
    } catch (error) {
      this.logger.error({ err: error, instanceId: id, event: event.type }, 'handling a connection event failed');
    }
  }

  /** The recipient of a message this replica did not send (it took the instance over): from MessageAccepted. */
  private async recipientOf(instanceId: string, messageId: string): Promise<string> {
    const [first] = await this.events.readStream(messageStream(instanceId, messageId));
    const accepted = first?.events.find((e) => e.type === 'MessageAccepted');
    return accepted ? String(accepted.data.to) : '';
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
      if (this.sessions.get(session.instanceId) !== session || !this.ownership.owns(session.instanceId)) return;
      this.sessions.delete(session.instanceId);
      this.start(session.instanceId).catch((error: unknown) => {
        this.logger.warn({ err: error, instanceId: session.instanceId }, 'reconnect failed; the next sweep retries');
        void this.ownership.release(session.instanceId);
      });
    }, delay);
    session.reconnectTimer.unref();
  }

  /** Records lifecycle events behind the instance's earlier facts; the command id is fixed once, for every retry. */
  private recordInstance(instanceId: string, events: InstanceEvent[]): void {
    const commandId = randomUUID();
    this.facts.record(instanceId, events.map((e) => e.type).join('+'), async () => {
      await this.events.append(instanceStream(instanceId), events, { expectedVersion: 'any', commandId });
    });
  }
}

const now = (): string => new Date().toISOString();

/** How long a clean shutdown waits for facts still being retried. */
const FACTS_DRAIN_MS = 5_000;
