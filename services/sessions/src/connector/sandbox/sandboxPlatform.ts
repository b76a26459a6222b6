import { randomBytes, randomUUID } from 'node:crypto';
import type { Connection, ConnectionEvent, Connector, InboundMessage, OutboundMessage, ReceiptStatus } from '../port';

export interface SandboxOptions {
  /** A new QR code every this many ms while waiting for a scan. */
  qrIntervalMs?: number;
  /** QR codes per connection attempt; after the last one expires the attempt ends (`qr_expired`). */
  qrCount?: number;
  sentDelayMs?: number;
  deliveredDelayMs?: number;
  readDelayMs?: number;
}

/** What the simulated platform received from an instance (for tests and demos). */
export interface SandboxSent {
  messageId: string;
  to: string;
  text: string | null;
  media: { mimetype: string; filename: string | null; size: number; caption: string | null } | null;
}

interface OpenConnection {
  instanceId: string;
  emit: (event: ConnectionEvent) => void;
  qr: string | null;
  connected: boolean;
  timers: Set<NodeJS.Timeout>;
  closed: boolean;
}

/** A QR string shaped like WhatsApp's: ref, noise public key, identity key, adv secret. */
const newQr = (): string =>
  [randomBytes(24).toString('base64'), randomBytes(32).toString('base64'), randomBytes(32).toString('base64'), randomBytes(32).toString('base64')].join(',');

/**
 * A simulated messaging platform: it issues QR codes, links an instance when the "phone" scans, acknowledges,
 * delivers and reads sent messages after short delays (recipients starting with 000 do not exist), and lets a
 * contact send the instance messages. The phone side (which instance is linked to which number) lives in this
 * object. One open connection per instance: a new one replaces the old (as WhatsApp's code 440 does). The platform
 * deduplicates by message id, as WhatsApp does for client-chosen ids.
 */
export class SandboxPlatform implements Connector {
  readonly name = 'sandbox';
  private readonly links = new Map<string, string>();
  private readonly open = new Map<string, OpenConnection>();
  private readonly received = new Map<string, SandboxSent[]>();
  private readonly options: Required<SandboxOptions>;

  constructor(options: SandboxOptions = {}) {
    this.options = {
      qrIntervalMs: options.qrIntervalMs ?? 20_000,
      qrCount: options.qrCount ?? 5,
      sentDelayMs: options.sentDelayMs ?? 50,
      deliveredDelayMs: options.deliveredDelayMs ?? 150,
      readDelayMs: options.readDelayMs ?? 400,
    };
  }

  async connect(instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection> {
    this.end(this.open.get(instanceId));
    const conn: OpenConnection = { instanceId, emit: onEvent, qr: null, connected: false, timers: new Set(), closed: false };
    this.open.set(instanceId, conn);
    const number = this.links.get(instanceId);
    if (number) this.later(conn, 5, () => this.link(conn, number));
    else this.issueQr(conn, 1);
    return {
      send: (message) => this.accept(conn, message),
      logout: async () => {
        this.links.delete(instanceId);
        this.end(conn);
      },
      close: async () => this.end(conn),
    };
  }

  /** The QR code an unlinked connection of the instance is showing now, or null. */
  currentQr(instanceId: string): string | null {
    return this.open.get(instanceId)?.qr ?? null;
  }

  /** The phone scans the current QR code: the instance is linked to `number`. */
  scan(instanceId: string, number: string): void {
    const conn = this.open.get(instanceId);
    if (!conn?.qr) throw new Error('No QR code of this instance is waiting to be scanned: call get_qrcode first');
    this.links.set(instanceId, number);
    this.link(conn, number);
  }

  /** A contact sends the instance a message. */
  inject(instanceId: string, message: Pick<InboundMessage, 'from' | 'pushName' | 'text' | 'media'>): void {
    const conn = this.open.get(instanceId);
    if (!conn?.connected) throw new Error('The instance is not connected to the sandbox');
    conn.emit({ type: 'inbound', message: { ...message, platformMessageId: randomUUID(), timestamp: new Date().toISOString() } });
  }

  /** The connection drops (network); the link stays. */
  disconnect(instanceId: string, reason: string): void {
    const conn = this.open.get(instanceId);
    if (!conn) return;
    const emit = conn.emit;
    this.end(conn);
    emit({ type: 'disconnected', reason });
  }

  /** The user removes the linked device on the phone. */
  logoutFromPhone(instanceId: string): void {
    this.links.delete(instanceId);
    const conn = this.open.get(instanceId);
    if (!conn) return;
    const emit = conn.emit;
    this.end(conn);
    emit({ type: 'logged_out', reason: 'logged_out_on_phone' });
  }

  /** Every message the platform accepted from the instance, in order. */
  sent(instanceId: string): SandboxSent[] {
    return [...(this.received.get(instanceId) ?? [])];
  }

  private issueQr(conn: OpenConnection, n: number): void {
    if (conn.closed || conn.connected) return;
    if (n > this.options.qrCount) {
      conn.qr = null;
      const emit = conn.emit;
      this.end(conn);
      emit({ type: 'disconnected', reason: 'qr_expired' });
      return;
    }
    conn.qr = newQr();
    conn.emit({ type: 'qr', qr: conn.qr });
    this.later(conn, this.options.qrIntervalMs, () => this.issueQr(conn, n + 1));
  }

  private link(conn: OpenConnection, number: string): void {
    if (conn.closed) return;
    conn.qr = null;
    conn.connected = true;
    conn.timers.forEach((t) => clearTimeout(t));
    conn.timers.clear();
    conn.emit({ type: 'connected', number });
  }

  private async accept(conn: OpenConnection, message: OutboundMessage): Promise<void> {
    if (conn.closed || !conn.connected) throw new Error('not connected');
    const list = this.received.get(conn.instanceId) ?? [];
    this.received.set(conn.instanceId, list);
    if (list.some((m) => m.messageId === message.messageId)) return;
    list.push({
      messageId: message.messageId,
      to: message.to,
      text: message.text ?? null,
      media: message.media
        ? { mimetype: message.media.mimetype, filename: message.media.filename ?? null, size: message.media.data.length, caption: message.media.caption ?? null }
        : null,
    });
    const receipt = (status: ReceiptStatus, reason?: string) => () =>
      conn.emit({ type: 'receipt', messageId: message.messageId, status, ...(reason ? { reason } : {}) });
    this.later(conn, this.options.sentDelayMs, receipt('sent'));
    if (message.to.startsWith('000')) {
      this.later(conn, this.options.deliveredDelayMs, receipt('failed', 'recipient_not_on_platform'));
      return;
    }
    this.later(conn, this.options.deliveredDelayMs, receipt('delivered'));
    this.later(conn, this.options.readDelayMs, receipt('read'));
  }

  private later(conn: OpenConnection, ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      conn.timers.delete(timer);
      if (!conn.closed) run();
    }, ms);
    timer.unref();
    conn.timers.add(timer);
  }

  private end(conn: OpenConnection | undefined): void {
    if (!conn || conn.closed) return;
    conn.closed = true;
    conn.connected = false;
    conn.timers.forEach((t) => clearTimeout(t));
    conn.timers.clear();
    if (this.open.get(conn.instanceId) === conn) this.open.delete(conn.instanceId);
  }
}
