// A Baileys socket as the adapter sees it, for the Baileys connector's unit tests (services/sessions/src/connector/baileys).
import { EventEmitter } from 'node:events';
import {
  initAuthCreds,
  proto,
  type AnyMessageContent,
  type BaileysEventMap,
  type Contact,
  type GroupMetadata,
  type WAPresence,
  type MiscMessageGenerationOptions,
  type UserFacingSocketConfig,
  type WAMessage,
  type WAMessageKey,
} from '@whiskeysockets/baileys';
import { testLogger } from './logger';
import type { ConnectionEvent, OutboundMessage } from '../../services/sessions/src/connector/port';
import { BaileysConnector } from '../../services/sessions/src/connector/baileys/baileysConnector';
import { AuthStateStore } from '../../services/sessions/src/connector/baileys/kvAuthState';
import { SentMessageStore } from '../../services/sessions/src/connector/baileys/sentStore';
import { MESSAGE_ACK, type SocketEvent, type WaSocket } from '../../services/sessions/src/connector/baileys/socket';
import { MemoryTextBucket } from '../../services/sessions/src/connector/baileys/textBucket';

/** A message as Baileys 7 types it (its key is always present, which protobuf's own type cannot say). */
export const waMessage = (fields: proto.IWebMessageInfo): WAMessage => proto.WebMessageInfo.fromObject(fields) as WAMessage;

export const boom = (statusCode: number, message: string): Error => Object.assign(new Error(message), { output: { statusCode } });

/** A Baileys socket as the adapter sees it: events in, sends recorded. */
export class FakeSocket implements WaSocket {
  readonly events = new EventEmitter();
  readonly ws = new EventEmitter();
  readonly ev = {
    on: <T extends SocketEvent>(event: T, listener: (arg: BaileysEventMap[T]) => void): void => {
      this.events.on(event, listener);
    },
    removeAllListeners: <T extends SocketEvent>(event: T): void => {
      this.events.removeAllListeners(event);
    },
  };
  user: Contact | undefined = undefined;
  /** What Baileys learnt of LID → phone-number pairs. */
  readonly lids = new Map<string, string>();
  readonly signalRepository = { lidMapping: { getPNForLID: async (lid: string): Promise<string | null> => this.lids.get(lid) ?? null } };
  readonly ended: Array<Error | undefined> = [];
  readonly sent: Array<{ jid: string; content: AnyMessageContent; options?: MiscMessageGenerationOptions }> = [];
  loggedOut = false;
  /** Numbers without a WhatsApp account, and every number lookup asked (jids). */
  readonly unregistered = new Set<string>();
  readonly lookups: string[][] = [];
  private closed = false;

  constructor(readonly config: UserFacingSocketConfig) {}

  readonly pairingRequests: string[] = [];
  /** The keys of every read receipt sent. */
  readonly reads: WAMessageKey[] = [];

  async readMessages(keys: WAMessageKey[]): Promise<void> {
    this.reads.push(...keys);
    if (this.silent) return new Promise(() => undefined);
  }

  timelockQueries = 0;

  async fetchAccountReachoutTimelock(): Promise<unknown> {
    this.timelockQueries += 1;
    return {};
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    this.pairingRequests.push(phoneNumber);
    return 'ABCD1234';
  }

  /** The groups groupFetchAllParticipating answers, and the presences sent. */
  readonly groups: Record<string, GroupMetadata> = {};
  readonly presences: Array<[WAPresence, string | undefined]> = [];

  groupFetches = 0;

  async groupFetchAllParticipating(): Promise<Record<string, GroupMetadata>> {
    this.groupFetches += 1;
    return { ...this.groups };
  }

  async sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void> {
    this.presences.push([type, toJid]);
  }

  /** Number lookups and read receipts get no answer (a socket gone silent): Baileys' query waits for its 60 s time-out. */
  silent = false;

  async onWhatsApp(...jids: string[]): Promise<Array<{ jid: string; exists: boolean }>> {
    this.lookups.push(jids);
    if (this.silent) return new Promise(() => undefined);
    return jids.filter((jid) => !this.unregistered.has(jid.split('@')[0] ?? '')).map((jid) => ({ jid, exists: true }));
  }

  async sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage> {
    this.sent.push({ jid, content, options });
    const text = 'text' in content ? content.text : 'media';
    return waMessage({ key: { remoteJid: jid, fromMe: true, id: options?.messageId }, message: { extendedTextMessage: { text } } });
  }

  async logout(): Promise<void> {
    this.loggedOut = true;
    this.end(boom(401, 'Intentional Logout'));
  }

  /** Like Baileys: the first end reports the close (with the error), later ones do nothing. */
  end(error: Error | undefined): void {
    this.ended.push(error);
    if (this.closed) return;
    this.closed = true;
    this.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
  }

  emit<T extends SocketEvent>(event: T, arg: BaileysEventMap[T]): void {
    this.events.emit(event, arg);
  }

  open(id = '15551234567:12@s.whatsapp.net'): void {
    this.user = { id };
    this.emit('connection.update', { connection: 'open' });
  }

  closeWith(statusCode: number, message = 'Connection Failure'): void {
    this.end(boom(statusCode, message));
  }

  ack(attrs: Record<string, string>): void {
    this.ws.emit(MESSAGE_ACK, { tag: 'ack', attrs: { class: 'message', from: '15550001111@s.whatsapp.net', ...attrs } });
  }

  status(waId: string, status: proto.WebMessageInfo.Status, stub?: string): void {
    this.emit('messages.update', [
      { key: { remoteJid: '15550001111@s.whatsapp.net', fromMe: true, id: waId }, update: { status, ...(stub ? { messageStubParameters: [stub] } : {}) } },
    ]);
  }

  listeners(): number {
    const names: SocketEvent[] = ['connection.update', 'creds.update', 'messages.upsert', 'messages.update', 'message-receipt.update'];
    return names.reduce((n, name) => n + this.events.listenerCount(name), 0) + this.ws.listenerCount(MESSAGE_ACK);
  }
}

/** Lets queued promise callbacks and immediate tasks run. */
export const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

export const linkedCreds = () => Object.assign(initAuthCreds(), { me: { id: '15551234567:12@s.whatsapp.net' }, account: { details: Buffer.from('signed') } });

export const setup = (authBucket = new MemoryTextBucket(), sentBucket = new MemoryTextBucket()) => {
  const logger = testLogger('baileys-connector');
  const sockets: FakeSocket[] = [];
  const auth = new AuthStateStore(authBucket, logger);
  const sent = new SentMessageStore(sentBucket);
  const connector = new BaileysConnector({
    auth,
    sent,
    logger,
    makeSocket: (config) => {
      const socket = new FakeSocket(config);
      sockets.push(socket);
      return socket;
    },
  });
  const events: ConnectionEvent[] = [];
  const connect = (instanceId = 'INST1') => connector.connect(instanceId, (event) => events.push(event));
  const last = (): FakeSocket => sockets[sockets.length - 1]!;
  return { connector, sockets, events, connect, last, auth, sent, authBucket, sentBucket };
};

export const message = (overrides: Partial<OutboundMessage> = {}): OutboundMessage => ({ messageId: 'msg-1', to: '15550001111', text: 'hello', ...overrides });
