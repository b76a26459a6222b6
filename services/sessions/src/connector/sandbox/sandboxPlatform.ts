import { randomBytes } from 'node:crypto';
import {
  ACCOUNT_RESTRICTED,
  MediaUnavailable,
  type Connection,
  type ConnectionEvent,
  type Connector,
  type InboundMessage,
  type MediaDownload,
  type OutboundMessage,
} from '../port';
import { isDigits, newPairingCode, newPlatformMessageId, newQr } from './ids';
import { MemorySandboxLedger, type SandboxLedger } from './ledger';
import { clearTimers, later, type OpenConnection } from './openConnection';
import { ReceiptQueue } from './receiptQueue';
import { plannedReceipts, UNREACHABLE_PREFIX } from './receiptPlan';
import { parseRef, ReadMarks, sandboxInboundMessage, type SandboxInbound, type SandboxReadMark } from './sandboxRef';
import { sandboxMediaFile } from './sandboxMedia';
import { SandboxRestrictions } from './sandboxRestrictions';
import { SentRecords, type SandboxSent } from './sentRecords';
import { isSandboxGroupOf, PresenceLog, SandboxNotInGroup, sandboxGroupsOf, type SandboxPresence } from './sandboxChats';
import { sandboxTimingsOf, type SandboxOptions, type SandboxTimings } from './sandboxOptions';

export type { SandboxOptions } from './sandboxOptions';
export type { SandboxInbound } from './sandboxRef';

/**
 * A simulated messaging platform (the `sandbox` connector, a product feature for trying the API without a phone).
 * It plays both the platform and the phone: it issues QR codes that expire, links an instance to a number when
 * the phone "scans" (`scan`), acknowledges, delivers and reads sent messages after configurable delays (numbers
 * starting with 000 are not on the platform), and lets contacts write to the instance (`inject`).
 *
 * Like WhatsApp:
 * - the link (the phone side) outlives connections: a linked instance connects again without a QR code;
 * - one open connection per instance: a new one replaces the old, which reports `disconnected` / `replaced`
 *   (WhatsApp's code 440) and then falls silent;
 * - receipts not yet reported when a connection ends arrive on the instance's next connection, after `connected`;
 * - a message id already taken is not sent twice (the send resolves, nothing new happens).
 *
 * Limit: the platform cannot see an instance wiping its credentials; only `Connection.logout()` (or the phone,
 * `logoutFromPhone`) ends a link.
 */
export class SandboxPlatform implements Connector {
  readonly name = 'sandbox';
  private readonly open = new Map<string, OpenConnection>();
  /** Instances whose network is cut (`cutNetwork`). */
  private readonly unreachable = new Set<string>();
  private readonly receipts: ReceiptQueue;
  private readonly records = new SentRecords();
  private readonly presences = new PresenceLog();
  private readonly readMarks = new ReadMarks();
  private readonly restrictions = new SandboxRestrictions();
  private readonly ledger: SandboxLedger;
  private readonly options: SandboxTimings;
  private readonly now: () => Date;

  constructor(options: SandboxOptions = {}) {
    this.options = sandboxTimingsOf(options);
    this.now = options.now ?? (() => new Date());
    this.ledger = options.ledger ?? new MemorySandboxLedger();
    this.receipts = new ReceiptQueue(this.ledger.receipts);
  }

  /**
   * Opens the instance's connection. A linked instance reports `connected` on the next turn of the event loop;
   * an unlinked one shows a QR code at once (before this resolves) and a fresh one every `qrIntervalMs`.
   */
  async connect(instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection> {
    if (this.unreachable.has(instanceId)) throw new Error(`Instance ${instanceId} cannot reach the sandbox (cutNetwork)`);
    const number = await this.ledger.linkOf(instanceId);
    const conn: OpenConnection = {
      id: randomBytes(6).toString('hex'),
      instanceId,
      emit: onEvent,
      stage: 'linking',
      number: null,
      qr: null,
      timers: new Set(),
      receiptTimer: null,
    };
    const previous = this.open.get(instanceId);
    this.open.set(instanceId, conn);
    if (previous) this.end(previous, { type: 'disconnected', reason: 'replaced' });
    if (number !== null) later(conn, 0, () => this.goOnline(conn, number));
    else this.showQr(conn, 1);
    return {
      send: (message) => this.accept(conn, message),
      requestPairingCode: async (number) => {
        if (!isDigits(number)) throw new Error(`The phone number must be international digits without '+', got '${number}'`);
        if (conn.stage !== 'qr') throw new Error(`Instance ${instanceId} is not waiting to be linked`);
        // The simulated phone links on /v1/sandbox/scan, with or without the code.
        return newPairingCode();
      },
      checkNumbers: async (numbers) => {
        if (conn.stage !== 'connected') throw new Error(`Instance ${instanceId} is not connected to the sandbox`);
        return numbers.map((number) => {
          const exists = !number.startsWith(UNREACHABLE_PREFIX);
          return { number, exists, jid: exists ? `${number}@s.whatsapp.net` : null };
        });
      },
      listGroups: async () => sandboxGroupsOf(this.connected(instanceId).number ?? ''),
      setTyping: async (to, typing) => {
        this.connected(instanceId);
        this.presences.add(instanceId, to, typing);
      },
      markRead: async (ref) => {
        if (conn.stage !== 'connected') throw new Error(`Instance ${instanceId} is not connected to the sandbox`);
        const { platformMessageId, from } = parseRef(ref);
        this.readMarks.add(instanceId, { platformMessageId, from, at: this.now().toISOString() });
      },
      logout: () => this.logout(conn),
      close: async () => this.end(conn),
    };
  }

  /** The file of a simulated contact's message, made from its ref (any replica serves the same bytes). */
  async downloadMedia(ref: string, maxBytes: number): Promise<MediaDownload> {
    const { media } = parseRef(ref);
    if (!media) throw new MediaUnavailable('no_media', 'The message has no media');
    return sandboxMediaFile(media, maxBytes);
  }

  /** The read receipts the instance sent (mark_read, or automatic ones), oldest first (the latest 1,000). */
  readMarksOf(instanceId: string): SandboxReadMark[] {
    return this.readMarks.of(instanceId);
  }

  /** Forgets the instance's link (its credentials are gone): the next connection shows a QR code. */
  async purge(instanceId: string): Promise<void> {
    await this.unlink(instanceId);
  }

  /** The QR code the instance's open connection is showing now, or null. */
  currentQr(instanceId: string): string | null {
    return this.open.get(instanceId)?.qr ?? null;
  }

  /** The number the instance is linked to, or null. */
  linkedNumber(instanceId: string): Promise<string | null> {
    return this.ledger.linkOf(instanceId);
  }

  /** The phone (of `number`) scans the current QR code: the instance is linked and its connection reports `connected`. */
  async scan(instanceId: string, number: string): Promise<void> {
    if (!isDigits(number)) throw new Error(`The phone number must be international digits without '+', got '${number}'`);
    const conn = this.open.get(instanceId);
    if (conn?.stage !== 'qr' || !conn.qr) {
      throw new Error(`No QR code of instance ${instanceId} is waiting to be scanned: start a connection (get_qrcode) first`);
    }
    await this.ledger.setLink(instanceId, number);
    this.goOnline(conn, number);
  }

  /** A contact writes to the instance: its connected connection reports `inbound`. Answers the message as reported. */
  inject(instanceId: string, inbound: SandboxInbound): InboundMessage {
    const conn = this.connected(instanceId);
    if (!isDigits(inbound.from)) throw new Error(`The sender must be international digits without '+', got '${inbound.from}'`);
    if (inbound.groupId && !isSandboxGroupOf(conn.number ?? '', inbound.groupId)) {
      throw new SandboxNotInGroup(`Instance ${instanceId} is not in group ${inbound.groupId}: use a group list_groups answers`);
    }
    const message = sandboxInboundMessage(inbound, inbound.platformMessageId ?? newPlatformMessageId(), this.now());
    conn.emit({ type: 'inbound', message });
    return message;
  }

  /**
   * WhatsApp restricts the instance's account: its sends fail (`account_restricted`) until `untilMs`, if given, or
   * `lift`. A known end is announced at once (WhatsApp pushes it); an unknown one shows at the next send.
   */
  restrict(instanceId: string, untilMs: number | null): void {
    this.restrictions.set(instanceId, untilMs);
    const conn = this.open.get(instanceId);
    if (untilMs !== null && conn?.stage === 'connected') conn.emit(this.restrictions.announce(instanceId));
  }

  /** Lifts the instance's restriction; its connection hears so. */
  lift(instanceId: string): void {
    const over = this.restrictions.lift(instanceId);
    const conn = this.open.get(instanceId);
    if (over && conn?.stage === 'connected') conn.emit(over);
  }

  /** The network drops the instance's open connection: it reports `disconnected` and closes; the link stays. */
  disconnect(instanceId: string, reason = 'connection_lost'): void {
    const conn = this.open.get(instanceId);
    if (!conn) throw new Error(`Instance ${instanceId} has no open sandbox connection to drop`);
    this.end(conn, { type: 'disconnected', reason });
  }

  /**
   * An outage for one instance: its open connection drops (`disconnected`, `connection_lost`) and new connections
   * are refused until `restoreNetwork`. The link stays.
   */
  cutNetwork(instanceId: string): void {
    this.unreachable.add(instanceId);
    const conn = this.open.get(instanceId);
    if (conn) this.end(conn, { type: 'disconnected', reason: 'connection_lost' });
  }

  restoreNetwork(instanceId: string): void {
    this.unreachable.delete(instanceId);
  }

  /** The user removes the linked device on the phone: the link ends, an open connection reports `logged_out`. */
  async logoutFromPhone(instanceId: string): Promise<void> {
    if (!(await this.unlink(instanceId))) throw new Error(`Instance ${instanceId} is not linked to a phone in the sandbox`);
    const conn = this.open.get(instanceId);
    if (conn) this.end(conn, { type: 'logged_out', reason: 'logged_out_on_phone' });
  }

  /**
   * Erasure: the gateway's side of the sandbox keeps no sent content; what `sent` lists is what the simulated
   * platform received, and a platform keeps what it received (as WhatsApp does).
   */
  async forgetContent(): Promise<void> {}

  /** Every message the platform accepted from the instance, oldest first (the latest 10,000). */
  sent(instanceId: string): SandboxSent[] {
    return this.records.of(instanceId);
  }

  /** The typing presences the instance showed, oldest first (the latest 1,000). */
  typing(instanceId: string): SandboxPresence[] {
    return this.presences.of(instanceId);
  }

  private showQr(conn: OpenConnection, n: number): void {
    if (conn.stage !== 'linking' && conn.stage !== 'qr') return;
    if (n > this.options.qrCount) {
      this.end(conn, { type: 'disconnected', reason: 'qr_expired' });
      return;
    }
    conn.stage = 'qr';
    conn.qr = newQr();
    conn.emit({ type: 'qr', qr: conn.qr });
    later(conn, this.options.qrIntervalMs, () => this.showQr(conn, n + 1));
  }

  private goOnline(conn: OpenConnection, number: string): void {
    if (conn.stage === 'closed') return;
    clearTimers(conn);
    conn.stage = 'connected';
    conn.number = number;
    conn.qr = null;
    this.ledger.connectionOnline?.(conn.instanceId, conn.id, Date.now());
    conn.emit({ type: 'connected', number });
    this.receipts.schedule(conn);
    void this.receipts.restore(conn);
  }

  private connected(instanceId: string): OpenConnection {
    const conn = this.open.get(instanceId);
    if (conn?.stage !== 'connected') throw new Error(`Instance ${instanceId} is not connected to the sandbox`);
    return conn;
  }

  private async accept(conn: OpenConnection, message: OutboundMessage): Promise<void> {
    const id = conn.instanceId;
    if (conn.stage !== 'connected') throw new Error(`Instance ${id} is not connected to the sandbox: the message was not sent`);
    const group = message.to.endsWith('@g.us');
    if (!group && !isDigits(message.to)) throw new Error(`The recipient must be international digits without '+' or a group id, got '${message.to}'`);
    const { text, media, location, contact, reaction } = message;
    if (text === undefined && !media && !location && !contact && !reaction)
      throw new Error('A message needs text or media, a location, a contact or a reaction');
    if (this.restrictions.holds(id)) {
      conn.emit(this.restrictions.announce(id));
      // Owed like any receipt, so a refusal not yet reported when the connection drops comes on the next one.
      await this.receipts.owe(conn, [
        { messageId: message.messageId, status: 'failed', reason: ACCOUNT_RESTRICTED, dueAt: performance.now() + this.options.sentDelayMs },
      ]);
      return;
    }
    this.restrictions.taken(id);
    // A repeat the platform took before is not sent again. Its receipts still come unless this process already
    // acknowledged it: the first attempt may have been taken while its caller saw a failure (a dropped NATS
    // connection), or taken by a replica that crashed before its receipts; they carry the same ids, and the event
    // store keeps each once. One it acknowledged is acknowledged again (`sent`), as WhatsApp's server acks every
    // message it is handed: a send whose first `sent` was lost is handed out again, and must hear one.
    const fresh = await this.ledger.takeMessageId(id, message.messageId);
    if (!fresh && this.records.has(id, message.messageId)) {
      await this.receipts.owe(conn, [{ messageId: message.messageId, status: 'sent', dueAt: performance.now() + this.options.sentDelayMs }]);
      return;
    }
    // A group the account is not in fails as a number without an account does.
    const unreachable = group ? !isSandboxGroupOf(conn.number ?? '', message.to) : undefined;
    // Owed before it is recorded as sent here: a send whose receipts could not be stored fails, and its retry (not
    // taken as one sent before) plans them again.
    await this.receipts.owe(conn, plannedReceipts(message.messageId, message.to, this.options, performance.now(), unreachable));
    this.records.add(id, message, this.now().toISOString());
  }

  private async logout(conn: OpenConnection): Promise<void> {
    const id = conn.instanceId;
    const wasLinked = await this.unlink(id);
    this.end(conn);
    // The device is gone: a newer connection of the same device cannot stay online either.
    const current = this.open.get(id);
    if (wasLinked && current && current.stage !== 'qr') this.end(current, { type: 'logged_out', reason: 'logged_out' });
  }

  private async unlink(instanceId: string): Promise<boolean> {
    this.receipts.drop(instanceId);
    const wasLinked = (await this.ledger.linkOf(instanceId)) !== null;
    if (wasLinked) await this.ledger.setLink(instanceId, null);
    return wasLinked;
  }

  /** Closes the connection for good (no event after `last`, which it reports when given). Idempotent. */
  private end(conn: OpenConnection, last?: ConnectionEvent): void {
    if (conn.stage === 'closed') return;
    if (conn.stage === 'connected') this.ledger.connectionEnded?.(conn.instanceId, conn.id, Date.now());
    conn.stage = 'closed';
    conn.qr = null;
    clearTimers(conn);
    if (this.open.get(conn.instanceId) === conn) this.open.delete(conn.instanceId);
    if (last) conn.emit(last);
  }
}
