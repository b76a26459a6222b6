import type { BaileysEventMap, BinaryNode, WAMessageUpdate } from '@whiskeysockets/baileys';
import type { Logger } from '@wagw/lib';
import { RECIPIENT_NOT_ON_PLATFORM, type Connection, type ConnectionEvent, type GroupInfo, type NumberCheck, type OutboundMessage } from '../port';
import { closeOf, decideOnClose, type EndEvent, type SocketClose } from './disconnectPolicy';
import { GroupList } from './groupList';
import { InboundQueue } from './inboundQueue';
import { parseInboundRef } from './inboundRef';
import type { InstanceCaches } from './instanceCaches';
import type { InstanceAuthState } from './kvAuthState';
import { ReceiptReporter } from './receiptReporter';
import { RestrictionWatch } from './restrictionWatch';
import type { SentMessageStore } from './sentStore';
import { MESSAGE_ACK, type WaSocket } from './socket';
import { chatJidOf, richContentOf, sendOptionsOf } from './richContent';
import { untilDropped } from './untilDropped';
import { isGroupJid, isRecipientUnknown, numberOf, outboundContent, waMessageIdFor } from './waMessages';

export interface ConnectionParts {
  instanceId: string;
  emit: (event: ConnectionEvent) => void;
  auth: InstanceAuthState;
  caches: InstanceCaches;
  sent: SentMessageStore;
  /** A new socket of the instance (same creds, keys and caches each time). */
  makeSocket: () => WaSocket;
  /** Wipes what is stored for the instance (its link is gone). */
  purge: () => Promise<void>;
  /** Called once, when the connection ends for good. */
  onEnded: () => void;
  logger: Logger;
}

const ignore = (): void => undefined;

/** How long list_groups answers from the last fetch of the account's groups. */
const GROUPS_TTL_MS = 60_000;

/** Restarts (515) in a row without the socket opening, before the connection gives up as `disconnected`. */
const MAX_RESTARTS = 5;

/**
 * One connection of an instance to WhatsApp, over one Baileys socket at a time: a socket WhatsApp asks to restart
 * (515, right after pairing) is replaced by a new one without a word to the session; any other close ends the
 * connection with the event the disconnect policy names. Reports QR codes, `connected`, receipts of our messages
 * (mapped back from WhatsApp ids to ours) and inbound 1:1 messages. Nothing is reported after the end.
 */
export class BaileysConnection implements Connection {
  private sock: WaSocket | null = null;
  /** Aborted when the current socket is dropped (`retire`). */
  private dropped = new AbortController();
  private detach: (() => void) | null = null;
  private ended = false;
  private online = false;
  private restarts = 0;
  private readonly groups = new GroupList(GROUPS_TTL_MS);
  /** The socket has shown a QR code: WhatsApp accepts a pairing request on it. */
  private showingQr = false;
  private readonly receipts: ReceiptReporter;
  private readonly inbound: InboundQueue;
  private readonly restriction: RestrictionWatch;

  constructor(private readonly parts: ConnectionParts) {
    const emit = (event: ConnectionEvent): void => this.emit(event);
    this.receipts = new ReceiptReporter({ ...parts, emit });
    this.inbound = new InboundQueue(emit, parts.logger);
    this.restriction = new RestrictionWatch(emit, parts.logger);
  }

  start(): void {
    const sock = this.parts.makeSocket();
    this.sock = sock;
    this.dropped = new AbortController();
    const onAck = (node: BinaryNode): void => this.onAck(sock, node);
    sock.ev.on('connection.update', (update) => this.onConnectionUpdate(sock, update));
    sock.ev.on('creds.update', () => {
      // A failed write is logged by the store; the next update writes the whole creds again.
      this.parts.auth.saveCreds().catch(() => undefined);
    });
    sock.ev.on('messages.upsert', (upsert) => this.onUpsert(sock, upsert));
    sock.ev.on('messages.update', (updates) => this.onUpdates(sock, updates));
    sock.ev.on('message-receipt.update', (updates) => {
      if (this.current(sock)) for (const update of updates) this.receipts.onGroupReceipt(update);
    });
    sock.ws.on(MESSAGE_ACK, onAck);
    this.detach = () => {
      sock.ev.removeAllListeners('connection.update');
      sock.ev.removeAllListeners('creds.update');
      sock.ev.removeAllListeners('messages.upsert');
      sock.ev.removeAllListeners('messages.update');
      sock.ev.removeAllListeners('message-receipt.update');
      sock.ws.off(MESSAGE_ACK, onAck);
    };
  }

  async send(message: OutboundMessage): Promise<void> {
    const sock = this.sock;
    const { instanceId, caches, sent } = this.parts;
    if (this.ended || !sock || !this.online) throw new Error(`Instance ${instanceId} is not connected to WhatsApp: the message was not sent`);
    const dropped = this.dropped.signal;
    const jid = chatJidOf(message.to);
    const content = richContentOf(message) ?? outboundContent(message);
    const waId = waMessageIdFor(message.messageId);
    caches.sentIds.set(waId, message.messageId);
    this.receipts.resending(waId);
    // A group is not a number: WhatsApp answers a send to a group the account is not in with item-not-found.
    const [recipient] = isGroupJid(jid)
      ? [{ exists: true }]
      : await untilDropped(
          dropped,
          caches.numbers.check((...jids) => sock.onWhatsApp(...jids), [message.to]),
        );
    if (!recipient?.exists) {
      this.receipts.report(waId, 'failed', RECIPIENT_NOT_ON_PLATFORM);
      return;
    }
    let result;
    try {
      result = await untilDropped(dropped, sock.sendMessage(jid, content, sendOptionsOf(message, waId)));
    } catch (error) {
      // A final answer, not a transient failure: the message fails with a reason rather than being retried for a day.
      if (!isRecipientUnknown(error)) throw error;
      this.receipts.report(waId, 'failed', RECIPIENT_NOT_ON_PLATFORM);
      return;
    }
    await sent.put(instanceId, waId, { messageId: message.messageId, message: result?.message ?? null }).catch((error: unknown) => {
      this.parts.logger.warn({ err: error, messageId: message.messageId }, 'storing a sent message failed: a re-send WhatsApp asks for will fail');
    });
  }

  /** Which numbers have a WhatsApp account (cached per instance; see NumberDirectory). */
  async checkNumbers(numbers: readonly string[]): Promise<NumberCheck[]> {
    return this.onConnectedSocket((sock) => this.parts.caches.numbers.check((...jids) => sock.onWhatsApp(...jids), numbers));
  }

  /** The groups the account takes part in (one `w:g2` query at most a minute; see GroupList). */
  async listGroups(): Promise<GroupInfo[]> {
    return this.onConnectedSocket((sock) => this.groups.get(() => sock.groupFetchAllParticipating()));
  }

  async setTyping(to: string, typing: boolean): Promise<void> {
    await this.onConnectedSocket((sock) => sock.sendPresenceUpdate(typing ? 'composing' : 'paused', chatJidOf(to)));
  }

  /** A read receipt for a received message (by the key it came with), as WhatsApp Web sends when a chat is opened. */
  async markRead(ref: string): Promise<void> {
    await this.onConnectedSocket(async (sock) => {
      const { key } = parseInboundRef(ref);
      await sock.readMessages([{ remoteJid: key.remoteJid, id: key.id, fromMe: false, ...(key.participant ? { participant: key.participant } : {}) }]);
    });
  }

  /** `work` on the connected socket, failed at once if that socket is dropped meanwhile (`untilDropped`). */
  private onConnectedSocket<T>(work: (sock: WaSocket) => Promise<T>): Promise<T> {
    const sock = this.sock;
    if (this.ended || !sock || !this.online) return Promise.reject(new Error(`Instance ${this.parts.instanceId} is not connected to WhatsApp`));
    return untilDropped(this.dropped.signal, work(sock));
  }

  /** A pairing code for `number`: only while QR codes show (the socket is open and not linked yet). */
  async requestPairingCode(number: string): Promise<string> {
    const sock = this.sock;
    if (this.ended || !sock || this.online || !this.showingQr) {
      throw new Error(`Instance ${this.parts.instanceId} is not waiting to be linked: no pairing code`);
    }
    return sock.requestPairingCode(number);
  }

  async logout(): Promise<void> {
    const sock = this.sock;
    // Silent from here: the close that the logout causes (401) is ours, not news.
    this.end();
    try {
      // Tells WhatsApp to remove the device; whatever it answers, the local credentials go.
      await sock?.logout();
    } finally {
      this.retire();
      await this.parts.auth.flush();
      await this.parts.purge();
    }
  }

  async close(): Promise<void> {
    this.end();
    this.retire();
    await this.parts.auth.flush();
  }

  /** Another connection of the instance took over: this one ends as WhatsApp would end it (440). */
  async replaced(): Promise<void> {
    await this.finish({ type: 'disconnected', reason: 'replaced' }, false);
  }

  private onConnectionUpdate(sock: WaSocket, update: BaileysEventMap['connection.update']): void {
    if (!this.current(sock)) return;
    if (update.reachoutTimeLock) this.restriction.onTimelock(update.reachoutTimeLock);
    if (update.qr) {
      this.showingQr = true;
      this.emit({ type: 'qr', qr: update.qr });
    }
    if (update.connection === 'open') {
      this.online = true;
      this.restarts = 0;
      this.emit({ type: 'connected', number: numberOf(sock.user?.id ?? this.parts.auth.state.creds.me?.id ?? '') });
    } else if (update.connection === 'close') {
      this.onClose(closeOf(update.lastDisconnect?.error)).catch((error: unknown) => {
        this.parts.logger.error({ err: error }, 'handling the end of a WhatsApp socket failed');
      });
    }
  }

  private async onClose(close: SocketClose | null): Promise<void> {
    const decision = decideOnClose(close);
    if (decision.action === 'none') return;
    this.retire();
    const { logger, auth } = this.parts;
    if (decision.action === 'restart' && this.restarts < MAX_RESTARTS) {
      this.restarts += 1;
      logger.info('WhatsApp asked for a restart (515): opening a new socket');
      // The creds the pairing just wrote must be stored before the new socket logs in with them.
      await auth.flush();
      if (!this.ended) this.start();
      return;
    }
    const event: EndEvent = decision.action === 'end' ? decision.event : { type: 'disconnected', reason: 'restart_loop' };
    logger.warn({ statusCode: close?.statusCode, reason: event.reason }, 'WhatsApp connection ended');
    await this.finish(event, decision.action === 'end' && decision.purge);
  }

  /** Ends the connection and reports `last`, after wiping the stored state when the link is gone. */
  private async finish(last: EndEvent, purge: boolean): Promise<void> {
    if (this.ended) return;
    this.end();
    this.retire();
    await this.parts.auth.flush();
    if (purge) {
      await this.parts.purge().catch((error: unknown) => {
        this.parts.logger.error({ err: error }, 'wiping the credentials of a logged out instance failed');
      });
    }
    this.deliver(last);
  }

  /**
   * New messages, whatever the batch type: messages that arrived while offline come as 'append', and Baileys'
   * event buffer flushes new and offline ones as one batch typed after its first message. Our own sends, history
   * and stubs are filtered out per message; the session drops repeats by platform id.
   */
  private onUpsert(sock: WaSocket, { messages }: BaileysEventMap['messages.upsert']): void {
    if (!this.current(sock)) return;
    for (const message of messages) {
      // The event buffer folds a status update into a pending upsert of the same message instead of emitting it.
      if (message.key.fromMe) this.receipts.onStatus(message.key, message);
      this.inbound.push(sock, message);
    }
  }

  private onUpdates(sock: WaSocket, updates: WAMessageUpdate[]): void {
    if (!this.current(sock)) return;
    for (const { key, update } of updates) this.receipts.onStatus(key, update);
  }

  private onAck(sock: WaSocket, node: BinaryNode): void {
    if (!this.current(sock)) return;
    this.receipts.onAck(node);
    this.restriction.onAck(sock, node);
  }

  private current(sock: WaSocket): boolean {
    return !this.ended && this.sock === sock;
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.online = false;
    this.parts.onEnded();
  }

  /** Drops the socket: our listeners first, so its own close (`end(undefined)`) reports nothing. */
  private retire(): void {
    const sock = this.sock;
    this.detach?.();
    this.detach = null;
    this.sock = null;
    this.online = false;
    this.showingQr = false;
    if (!sock) return;
    this.dropped.abort();
    sock.end(undefined);
    // A WebSocket closed during its handshake reports an error on the next tick, after `end` removed Baileys'
    // error listeners: unheard, it would be an uncaught exception that stops the process.
    sock.ws.on('error', ignore);
  }

  private emit(event: ConnectionEvent): void {
    // A message that arrived or a receipt is reported even after the end (a LID lookup of the inbound queue may finish
    // after a close): WhatsApp was told it arrived and does not send it again. Nothing else of an ended one counts.
    if (!this.ended || event.type === 'inbound' || event.type === 'receipt') this.deliver(event);
  }

  private deliver(event: ConnectionEvent): void {
    try {
      this.parts.emit(event);
    } catch (error) {
      this.parts.logger.error({ err: error, event: event.type }, 'a connection event handler threw');
    }
  }
}
