import { randomBytes } from 'node:crypto';
import type { Connection, ConnectionEvent, Connector, InboundMessage, OutboundMessage } from '../port';
import { isDigits, newPairingCode, newPlatformMessageId, newQr } from './ids';
import { MemorySandboxLedger, type SandboxLedger } from './ledger';
import { enqueueReceipts, plannedReceipts, UNREACHABLE_PREFIX, type PendingReceipt } from './receiptPlan';
import { SentRecords, type SandboxSent } from './sentRecords';

export interface SandboxOptions {
  /** A new QR code every this many ms while waiting for a scan. Default 20,000. */
  qrIntervalMs?: number;
  /** QR codes per connection attempt; when the last one expires the attempt ends (`disconnected`, `qr_expired`). Default 5. */
  qrCount?: number;
  /** Delay from a send to its `sent` receipt (the server took it). Default 50. */
  sentDelayMs?: number;
  /** Delay from a send to its `delivered` receipt (or `failed` for a recipient not on the platform). Default 150. */
  deliveredDelayMs?: number;
  /** Delay from a send to its `read` receipt. Default 400. */
  readDelayMs?: number;
  /** The clock for timestamps (inbound messages, records of sends). Timers do not use it. */
  now?: () => Date;
  /** Links and taken message ids; shared (KV) when several replicas use one sandbox. Default: in memory. */
  ledger?: SandboxLedger;
}

/** An inbound message to inject; the platform fills in its id and timestamp unless given. */
export type SandboxInbound = Omit<InboundMessage, 'platformMessageId' | 'timestamp'> & Partial<Pick<InboundMessage, 'platformMessageId' | 'timestamp'>>;

type Stage = 'linking' | 'qr' | 'connected' | 'closed';

interface OpenConnection {
  /** Names the connection in the ledger's connection records. */
  readonly id: string;
  readonly instanceId: string;
  readonly emit: (event: ConnectionEvent) => void;
  stage: Stage;
  qr: string | null;
  readonly timers: Set<NodeJS.Timeout>;
  receiptTimer: NodeJS.Timeout | null;
}

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
  private readonly receipts = new Map<string, PendingReceipt[]>();
  private readonly records = new SentRecords();
  private readonly ledger: SandboxLedger;
  private readonly options: Required<Omit<SandboxOptions, 'now' | 'ledger'>>;
  private readonly now: () => Date;

  constructor(options: SandboxOptions = {}) {
    this.options = {
      qrIntervalMs: options.qrIntervalMs ?? 20_000,
      qrCount: options.qrCount ?? 5,
      sentDelayMs: options.sentDelayMs ?? 50,
      deliveredDelayMs: options.deliveredDelayMs ?? 150,
      readDelayMs: options.readDelayMs ?? 400,
    };
    const { qrIntervalMs, qrCount, sentDelayMs, deliveredDelayMs, readDelayMs } = this.options;
    if (!(qrIntervalMs > 0)) throw new RangeError(`sandbox qrIntervalMs must be positive, got ${qrIntervalMs}`);
    if (!Number.isInteger(qrCount) || qrCount < 1) throw new RangeError(`sandbox qrCount must be a positive integer, got ${qrCount}`);
    for (const [key, value] of Object.entries({ sentDelayMs, deliveredDelayMs, readDelayMs })) {
      if (!(value >= 0) || !Number.isFinite(value)) throw new RangeError(`sandbox ${key} must be a finite number >= 0, got ${value}`);
    }
    this.now = options.now ?? (() => new Date());
    this.ledger = options.ledger ?? new MemorySandboxLedger();
  }

  /**
   * Opens the instance's connection. A linked instance reports `connected` on the next turn of the event loop;
   * an unlinked one shows a QR code at once (before this resolves) and a fresh one every `qrIntervalMs`.
   */
  async connect(instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection> {
    const number = await this.ledger.linkOf(instanceId);
    const conn: OpenConnection = {
      id: randomBytes(6).toString('hex'),
      instanceId,
      emit: onEvent,
      stage: 'linking',
      qr: null,
      timers: new Set(),
      receiptTimer: null,
    };
    const previous = this.open.get(instanceId);
    this.open.set(instanceId, conn);
    if (previous) this.end(previous, { type: 'disconnected', reason: 'replaced' });
    if (number !== null) this.later(conn, 0, () => this.goOnline(conn, number));
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
      logout: () => this.logout(conn),
      close: async () => this.end(conn),
    };
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
    const message: InboundMessage = {
      platformMessageId: inbound.platformMessageId ?? newPlatformMessageId(),
      from: inbound.from,
      pushName: inbound.pushName,
      text: inbound.text,
      media: inbound.media,
      timestamp: inbound.timestamp ?? this.now().toISOString(),
    };
    conn.emit({ type: 'inbound', message });
    return message;
  }

  /** The network drops the instance's open connection: it reports `disconnected` and closes; the link stays. */
  disconnect(instanceId: string, reason = 'connection_lost'): void {
    const conn = this.open.get(instanceId);
    if (!conn) throw new Error(`Instance ${instanceId} has no open sandbox connection to drop`);
    this.end(conn, { type: 'disconnected', reason });
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

  private showQr(conn: OpenConnection, n: number): void {
    if (conn.stage !== 'linking' && conn.stage !== 'qr') return;
    if (n > this.options.qrCount) {
      this.end(conn, { type: 'disconnected', reason: 'qr_expired' });
      return;
    }
    conn.stage = 'qr';
    conn.qr = newQr();
    conn.emit({ type: 'qr', qr: conn.qr });
    this.later(conn, this.options.qrIntervalMs, () => this.showQr(conn, n + 1));
  }

  private goOnline(conn: OpenConnection, number: string): void {
    if (conn.stage === 'closed') return;
    this.clearTimers(conn);
    conn.stage = 'connected';
    conn.qr = null;
    this.ledger.connectionOnline?.(conn.instanceId, conn.id, Date.now());
    conn.emit({ type: 'connected', number });
    this.scheduleReceipts(conn);
  }

  private connected(instanceId: string): OpenConnection {
    const conn = this.open.get(instanceId);
    if (conn?.stage !== 'connected') throw new Error(`Instance ${instanceId} is not connected to the sandbox`);
    return conn;
  }

  private async accept(conn: OpenConnection, message: OutboundMessage): Promise<void> {
    const id = conn.instanceId;
    if (conn.stage !== 'connected') throw new Error(`Instance ${id} is not connected to the sandbox: the message was not sent`);
    if (!isDigits(message.to)) throw new Error(`The recipient must be international digits without '+', got '${message.to}'`);
    if (message.text === undefined && !message.media) throw new Error('A message needs text or media');
    // A repeat the platform took before is not sent again. Its receipts still come unless this process already
    // acknowledged it: the first attempt may have been taken while its caller saw a failure (a dropped NATS
    // connection), or taken by a replica that crashed before its receipts; they carry the same ids, and the event
    // store keeps each once.
    const fresh = await this.ledger.takeMessageId(id, message.messageId);
    if (!fresh && this.records.has(id, message.messageId)) return;
    this.records.add(id, message, this.now().toISOString());
    this.queueReceipts(conn, message);
  }

  private queueReceipts(conn: OpenConnection, message: OutboundMessage): void {
    const pending = this.receipts.get(conn.instanceId) ?? [];
    this.receipts.set(conn.instanceId, pending);
    enqueueReceipts(pending, plannedReceipts(message.messageId, message.to, this.options, performance.now()));
    this.scheduleReceipts(conn);
  }

  /** Reports the due receipts of the instance on its connected connection, and waits for the next one. */
  private scheduleReceipts(conn: OpenConnection): void {
    if (conn.receiptTimer) {
      clearTimeout(conn.receiptTimer);
      conn.timers.delete(conn.receiptTimer);
      conn.receiptTimer = null;
    }
    const pending = this.receipts.get(conn.instanceId);
    const next = pending?.[0];
    if (conn.stage !== 'connected' || !pending || !next) return;
    conn.receiptTimer = this.later(conn, Math.max(0, next.dueAt - performance.now()), () => {
      conn.receiptTimer = null;
      const now = performance.now();
      for (let head = pending[0]; head && head.dueAt <= now && conn.stage === 'connected'; head = pending[0]) {
        pending.shift();
        conn.emit({ type: 'receipt', messageId: head.messageId, status: head.status, ...(head.reason ? { reason: head.reason } : {}) });
      }
      if (pending.length === 0 && this.receipts.get(conn.instanceId) === pending) this.receipts.delete(conn.instanceId);
      this.scheduleReceipts(conn);
    });
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
    this.receipts.delete(instanceId);
    const wasLinked = (await this.ledger.linkOf(instanceId)) !== null;
    if (wasLinked) await this.ledger.setLink(instanceId, null);
    return wasLinked;
  }

  private later(conn: OpenConnection, ms: number, run: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      conn.timers.delete(timer);
      if (conn.stage !== 'closed') run();
    }, ms);
    timer.unref();
    conn.timers.add(timer);
    return timer;
  }

  private clearTimers(conn: OpenConnection): void {
    conn.timers.forEach((timer) => clearTimeout(timer));
    conn.timers.clear();
    conn.receiptTimer = null;
  }

  /** Closes the connection for good (no event after `last`, which it reports when given). Idempotent. */
  private end(conn: OpenConnection, last?: ConnectionEvent): void {
    if (conn.stage === 'closed') return;
    if (conn.stage === 'connected') this.ledger.connectionEnded?.(conn.instanceId, conn.id, Date.now());
    conn.stage = 'closed';
    conn.qr = null;
    this.clearTimers(conn);
    if (this.open.get(conn.instanceId) === conn) this.open.delete(conn.instanceId);
    if (last) conn.emit(last);
  }
}
