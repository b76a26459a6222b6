import type { Connection, ConnectionEvent, Connector } from '../../services/sessions/src/connector/port';

// A connector that behaves as the Baileys one does where the session manager's lifecycle depends on it: one open
// connection per instance, which purge closes; opening and logging out take a while, held here by gates.

export interface Opened {
  closed: boolean;
  qr: string;
  /** When connect() opened it (ms since the epoch). */
  at: number;
}

/** Holds calls until the test lets them go. */
export class Gate {
  held = false;
  private waiting: Array<() => void> = [];

  get count(): number {
    return this.waiting.length;
  }

  pass(): Promise<void> {
    if (!this.held) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  open(): void {
    this.held = false;
    this.waiting.splice(0).forEach((go) => go());
  }
}

export class LikeBaileys implements Connector {
  readonly name = 'like-baileys';
  readonly opened: Opened[] = [];
  /** connect() waits here before it opens (reading the credentials takes a moment). */
  readonly connecting = new Gate();
  /** logout() waits here once its connection is closed (WhatsApp's answer, the wipe). */
  readonly loggingOut = new Gate();
  /** connect() throws: the platform cannot be reached. */
  unreachable = false;
  /**
   * Each connection opens and then reports `disconnected` at once, never `connected`: WhatsApp down for a linked
   * instance, as Baileys reports it (its connect() does not throw; the socket closes with a reason).
   */
  dropsOnOpen = false;
  private readonly open = new Map<string, Opened>();
  private n = 0;

  async connect(instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection> {
    await this.connecting.pass();
    if (this.unreachable) throw new Error('the platform cannot be reached');
    const conn: Opened = { closed: false, qr: `qr-${++this.n}`, at: Date.now() };
    this.opened.push(conn);
    this.open.set(instanceId, conn);
    const drops = this.dropsOnOpen;
    setImmediate(() => {
      if (conn.closed) return;
      if (!drops) return onEvent({ type: 'qr', qr: conn.qr });
      conn.closed = true;
      onEvent({ type: 'disconnected', reason: 'connection_lost' });
    });
    const close = async (): Promise<void> => {
      conn.closed = true;
      if (this.open.get(instanceId) === conn) this.open.delete(instanceId);
    };
    const none = async (): Promise<never> => Promise.reject(new Error('not scripted'));
    return {
      send: none,
      requestPairingCode: none,
      checkNumbers: none,
      listGroups: none,
      setTyping: none,
      markRead: none,
      logout: async () => {
        await close();
        await this.loggingOut.pass();
      },
      close,
    };
  }

  live(): Opened[] {
    return this.opened.filter((c) => !c.closed);
  }

  async purge(instanceId: string): Promise<void> {
    const conn = this.open.get(instanceId);
    if (conn) conn.closed = true;
    this.open.delete(instanceId);
  }

  downloadMedia = async (): Promise<never> => Promise.reject(new Error('not scripted'));
  forgetContent = async (): Promise<void> => undefined;
}
