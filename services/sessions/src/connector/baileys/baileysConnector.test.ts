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
import { testLogger } from '../../../../../test/harness/logger';
import type { ConnectionEvent, OutboundMessage } from '../port';
import { BaileysConnector } from './baileysConnector';
import { QR_REFS_ENDED } from './disconnectPolicy';
import { AuthStateStore } from './kvAuthState';
import { SentMessageStore } from './sentStore';
import { MESSAGE_ACK, type SocketEvent, type WaSocket } from './socket';
import { MemoryTextBucket } from './textBucket';
import { waMessageIdFor } from './waMessages';

/** A message as Baileys 7 types it (its key is always present, which protobuf's own type cannot say). */
const waMessage = (fields: proto.IWebMessageInfo): WAMessage => proto.WebMessageInfo.fromObject(fields) as WAMessage;

const boom = (statusCode: number, message: string): Error => Object.assign(new Error(message), { output: { statusCode } });

/** A Baileys socket as the adapter sees it: events in, sends recorded. */
class FakeSocket implements WaSocket {
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

  async onWhatsApp(...jids: string[]): Promise<Array<{ jid: string; exists: boolean }>> {
    this.lookups.push(jids);
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
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

const linkedCreds = () => Object.assign(initAuthCreds(), { me: { id: '15551234567:12@s.whatsapp.net' }, account: { details: Buffer.from('signed') } });

const setup = (authBucket = new MemoryTextBucket(), sentBucket = new MemoryTextBucket()) => {
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

const message = (overrides: Partial<OutboundMessage> = {}): OutboundMessage => ({ messageId: 'msg-1', to: '15550001111', text: 'hello', ...overrides });

describe('the baileys connector', () => {
  it('configures each socket as a quiet gateway, with fresh creds for an unlinked instance', async () => {
    const { connect, last } = setup();
    await connect();
    const { config } = last();
    expect(config).toMatchObject({ markOnlineOnConnect: false, syncFullHistory: false, printQRInTerminal: false, customUploadHosts: [] });
    expect(config.shouldSyncHistoryMessage?.({})).toBe(false);
    expect(config.auth.creds.me).toBeUndefined();
    for (const cache of [config.msgRetryCounterCache, config.userDevicesCache, config.callOfferCache, config.placeholderResendCache])
      expect(cache).toBeDefined();
    expect(config.logger?.level).toBe('silent'); // our test logger is quieter than Baileys' warn
  });

  it('reports each QR code', async () => {
    const { connect, last, events } = setup();
    await connect();
    last().emit('connection.update', { qr: '2@ref-1,key,key,secret' });
    last().emit('connection.update', { qr: '2@ref-2,key,key,secret' });
    expect(events).toEqual([
      { type: 'qr', qr: '2@ref-1,key,key,secret' },
      { type: 'qr', qr: '2@ref-2,key,key,secret' },
    ]);
  });

  it('reports the number of the account once the socket is open', async () => {
    const { connect, last, events } = setup();
    await connect();
    last().open('15551234567:12@s.whatsapp.net');
    expect(events).toEqual([{ type: 'connected', number: '15551234567' }]);
  });

  it('restarts on 515 with a new socket on the same creds and caches, silently, after ending the old one', async () => {
    const { connect, sockets, events, authBucket } = setup();
    await connect();
    const first = sockets[0]!;
    first.emit('connection.update', { qr: 'qr-1' });
    Object.assign(first.config.auth.creds, linkedCreds());
    first.emit('creds.update', {});
    first.closeWith(515, 'Stream Errored (restart required)');
    await settle();

    expect(sockets).toHaveLength(2);
    const second = sockets[1]!;
    expect(first.ended).toContain(undefined);
    expect(first.listeners()).toBe(0);
    expect(second.config.auth.creds).toBe(first.config.auth.creds);
    expect(authBucket.entries.has('INST1.creds')).toBe(true);
    for (const cache of ['msgRetryCounterCache', 'userDevicesCache', 'callOfferCache', 'placeholderResendCache'] as const) {
      expect(second.config[cache]).toBe(first.config[cache]);
    }
    expect(events).toEqual([{ type: 'qr', qr: 'qr-1' }]);
    second.open();
    expect(events).toEqual([
      { type: 'qr', qr: 'qr-1' },
      { type: 'connected', number: '15551234567' },
    ]);
  });

  it('keeps the caches of an instance across its connections', async () => {
    const { connect, sockets } = setup();
    const connection = await connect();
    await connection.close();
    await connect();
    expect(sockets[1]!.config.msgRetryCounterCache).toBe(sockets[0]!.config.msgRetryCounterCache);
    expect(sockets[1]!.config.userDevicesCache).toBe(sockets[0]!.config.userDevicesCache);
  });

  it('gives up restarting when WhatsApp keeps asking (515 loop), as disconnected', async () => {
    const { connect, sockets, last, events } = setup();
    await connect();
    for (let i = 0; i < 6; i++) {
      last().closeWith(515);
      await settle();
    }
    expect(sockets).toHaveLength(6);
    expect(events).toEqual([{ type: 'disconnected', reason: 'restart_loop' }]);
  });

  it('reports a device removed on the phone (401) as logged out, after wiping the stored credentials', async () => {
    const { connect, last, events, auth, authBucket, sent } = setup();
    await auth.state('INST1', linkedCreds()).saveCreds();
    await sent.put('INST1', 'WAID', { messageId: 'm', message: null });
    await connect();
    expect(last().config.auth.creds.me?.id).toBe('15551234567:12@s.whatsapp.net');
    last().open();
    last().closeWith(401);
    await settle();
    expect(events).toEqual([
      { type: 'connected', number: '15551234567' },
      { type: 'logged_out', reason: 'logged_out_on_phone' },
    ]);
    expect([...authBucket.entries.keys()]).toEqual([]);
    expect(await sent.get('INST1', 'WAID')).toBeNull();
  });

  it('leaves a replaced connection (440) to the session: disconnected, no new socket, credentials kept', async () => {
    const { connect, last, sockets, events, auth, authBucket } = setup();
    await auth.state('INST1', linkedCreds()).saveCreds();
    await connect();
    last().closeWith(440, 'Stream Errored (conflict)');
    await settle();
    expect(events).toEqual([{ type: 'disconnected', reason: 'replaced' }]);
    expect(sockets).toHaveLength(1);
    expect(authBucket.entries.has('INST1.creds')).toBe(true);
  });

  it('reports expired QR codes apart from a lost connection', async () => {
    const { connect, last, events } = setup();
    await connect();
    last().closeWith(408, QR_REFS_ENDED);
    await settle();
    await connect();
    last().closeWith(408, 'Connection was lost');
    await settle();
    expect(events).toEqual([
      { type: 'disconnected', reason: 'qr_expired' },
      { type: 'disconnected', reason: 'connection_lost' },
    ]);
  });

  it('fails for good on a banned account (403)', async () => {
    const { connect, last, events } = setup();
    await connect();
    last().closeWith(403);
    await settle();
    expect(events).toEqual([{ type: 'failed', reason: 'forbidden' }]);
  });

  it('asks for a pairing code only while QR codes show', async () => {
    const { connect, last } = setup();
    const connection = await connect();
    await expect(connection.requestPairingCode('15550001111')).rejects.toThrow(/not waiting to be linked/);
    last().emit('connection.update', { qr: 'ref,noise,identity,adv' });
    expect(await connection.requestPairingCode('15550001111')).toBe('ABCD1234');
    expect(last().pairingRequests).toEqual(['15550001111']);
    last().open();
    await expect(connection.requestPairingCode('15550001111')).rejects.toThrow(/not waiting to be linked/);
  });

  it('refuses to send before the socket is open', async () => {
    const { connect } = setup();
    const connection = await connect();
    await expect(connection.send(message())).rejects.toThrow(/not connected/);
  });

  it('sends text without a link preview, under a WhatsApp id derived from ours', async () => {
    const { connect, last } = setup();
    const connection = await connect();
    last().open();
    await connection.send(message({ messageId: 'msg-1', text: 'see https://example.com' }));
    await connection.send(message({ messageId: 'msg-1', text: 'see https://example.com' }));
    const [first, again] = last().sent;
    expect(first).toEqual({
      jid: '15550001111@s.whatsapp.net',
      content: { text: 'see https://example.com', linkPreview: null },
      options: { messageId: waMessageIdFor('msg-1') },
    });
    expect(again!.options!.messageId).toBe(first!.options!.messageId);
    expect(waMessageIdFor('msg-1')).toMatch(/^3EB0[0-9A-F]{18}$/);
    expect(waMessageIdFor('msg-2')).not.toBe(waMessageIdFor('msg-1'));
  });

  it('fails a send to a number without WhatsApp without sending it, and asks about each number once', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    last().open();
    last().unregistered.add('15550009999');
    await connection.send(message({ messageId: 'nobody-1', to: '15550009999' }));
    await connection.send(message({ messageId: 'nobody-2', to: '15550009999' }));
    await connection.send(message({ messageId: 'somebody', to: '15550002222' }));
    await connection.send(message({ messageId: 'somebody-again', to: '15550002222' }));
    await settle();
    expect(last().sent.map((s) => s.jid)).toEqual(['15550002222@s.whatsapp.net', '15550002222@s.whatsapp.net']);
    expect(last().lookups).toEqual([['15550009999@s.whatsapp.net'], ['15550002222@s.whatsapp.net']]);
    expect(events.filter((e) => e.type === 'receipt')).toEqual([
      { type: 'receipt', messageId: 'nobody-1', status: 'failed', reason: 'recipient_not_on_platform' },
      { type: 'receipt', messageId: 'nobody-2', status: 'failed', reason: 'recipient_not_on_platform' },
    ]);
  });

  it('sends media by content type, naming documents by their filename', async () => {
    const { connect, last } = setup();
    const connection = await connect();
    last().open();
    const data = Buffer.from('bytes');
    const media = (mimetype: string, extra: Partial<NonNullable<OutboundMessage['media']>> = {}): OutboundMessage =>
      message({ text: undefined, media: { data, mimetype, caption: 'look', ...extra } });
    await connection.send(media('image/png'));
    await connection.send(media('video/mp4'));
    await connection.send(media('audio/ogg; codecs=opus'));
    await connection.send(media('application/pdf', { filename: 'invoice.pdf' }));
    await connection.send(media('text/csv', { caption: undefined }));
    expect(last().sent.map((s) => s.content)).toEqual([
      { image: data, mimetype: 'image/png', caption: 'look' },
      { video: data, mimetype: 'video/mp4', caption: 'look' },
      { audio: data, mimetype: 'audio/ogg; codecs=opus' },
      { document: data, mimetype: 'application/pdf', fileName: 'invoice.pdf', caption: 'look' },
      { document: data, mimetype: 'text/csv', fileName: 'file', caption: undefined },
    ]);
  });

  it('keeps what it sent for the re-sends WhatsApp asks for (getMessage)', async () => {
    const { connect, last } = setup();
    const connection = await connect();
    last().open();
    await connection.send(message({ messageId: 'msg-9', text: 'again?' }));
    const found = await last().config.getMessage?.({ id: waMessageIdFor('msg-9'), remoteJid: '15550001111@s.whatsapp.net', fromMe: true });
    expect(found?.extendedTextMessage?.text).toBe('again?');
    expect(await last().config.getMessage?.({ id: 'UNKNOWN' })).toBeUndefined();
  });

  it('maps the server ack and the status updates of a message back to our id, each receipt once', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    last().open();
    await connection.send(message({ messageId: 'msg-1' }));
    const waId = waMessageIdFor('msg-1');
    last().ack({ id: waId });
    last().status(waId, proto.WebMessageInfo.Status.DELIVERY_ACK);
    last().status(waId, proto.WebMessageInfo.Status.READ);
    last().status(waId, proto.WebMessageInfo.Status.PLAYED);
    last().status(waId, proto.WebMessageInfo.Status.SERVER_ACK);
    last().status('SOMEONE-ELSES', proto.WebMessageInfo.Status.READ);
    await settle();
    expect(events.slice(1)).toEqual([
      { type: 'receipt', messageId: 'msg-1', status: 'sent' },
      { type: 'receipt', messageId: 'msg-1', status: 'delivered' },
      { type: 'receipt', messageId: 'msg-1', status: 'read' },
    ]);
  });

  it('reads a receipt folded into an upsert of our own message (Baileys buffers them together at connect)', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    last().open();
    await connection.send(message({ messageId: 'msg-folded' }));
    const folded = waMessage({
      key: { remoteJid: '15550001111@s.whatsapp.net', fromMe: true, id: waMessageIdFor('msg-folded') },
      message: { extendedTextMessage: { text: 'hello' } },
      status: proto.WebMessageInfo.Status.DELIVERY_ACK,
    });
    last().emit('messages.upsert', { messages: [folded], type: 'append' });
    await settle();
    expect(events.slice(1)).toEqual([{ type: 'receipt', messageId: 'msg-folded', status: 'delivered' }]);
  });

  it('reports delivered before a read that Baileys folded it into, for a message this connection sent', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    last().open();
    await connection.send(message({ messageId: 'msg-read' }));
    last().ack({ id: waMessageIdFor('msg-read') });
    last().status(waMessageIdFor('msg-read'), proto.WebMessageInfo.Status.READ);
    await settle();
    expect(events.slice(1).map((e) => e.type === 'receipt' && e.status)).toEqual(['sent', 'delivered', 'read']);
  });

  it('reports a refused message as failed, from the ack error or the ERROR status', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    last().open();
    await connection.send(message({ messageId: 'bad-ack' }));
    await connection.send(message({ messageId: 'bad-status' }));
    last().ack({ id: waMessageIdFor('bad-ack'), error: '479' });
    last().status(waMessageIdFor('bad-ack'), proto.WebMessageInfo.Status.ERROR, '479');
    last().status(waMessageIdFor('bad-status'), proto.WebMessageInfo.Status.ERROR);
    await settle();
    expect(events.slice(1)).toEqual([
      { type: 'receipt', messageId: 'bad-ack', status: 'failed', reason: 'platform_error_479' },
      { type: 'receipt', messageId: 'bad-status', status: 'failed', reason: 'platform_error' },
    ]);
  });

  it('maps receipts of messages sent before a restart through the sent store', async () => {
    const sentBucket = new MemoryTextBucket();
    const before = setup(new MemoryTextBucket(), sentBucket);
    const connection = await before.connect();
    before.last().open();
    await connection.send(message({ messageId: 'msg-old' }));
    await connection.close();

    const after = setup(new MemoryTextBucket(), sentBucket);
    await after.connect();
    after.last().open();
    after.last().status(waMessageIdFor('msg-old'), proto.WebMessageInfo.Status.READ);
    await settle();
    expect(after.events.slice(1)).toEqual([{ type: 'receipt', messageId: 'msg-old', status: 'read' }]);
  });

  it('reports new messages of 1:1 chats only, with text, media details and captions', async () => {
    const { connect, last, events } = setup();
    await connect();
    last().open();
    const from = (remoteJid: string, content: proto.IMessage, extra: Partial<WAMessage> = {}): WAMessage =>
      waMessage({
        key: { remoteJid, fromMe: false, id: `ID-${Math.random()}` },
        message: content,
        messageTimestamp: 1_700_000_000,
        pushName: 'Bob',
        ...extra,
      });
    const messages = [
      from('15550002222@s.whatsapp.net', { conversation: 'hi' }),
      from('15550002222@s.whatsapp.net', { extendedTextMessage: { text: 'a link https://x.y' } }),
      from('15550002222@s.whatsapp.net', { imageMessage: { mimetype: 'image/jpeg', caption: 'a photo', fileLength: 1234 } }),
      from('15550002222@s.whatsapp.net', { documentMessage: { mimetype: 'application/pdf', fileName: 'a.pdf', fileLength: 99 } }),
      from('15550002222@s.whatsapp.net', { ephemeralMessage: { message: { conversation: 'disappearing' } } }),
      from('120363000000000000@g.us', { conversation: 'group chatter' }),
      from('status@broadcast', { conversation: 'a status' }),
      from('15550002222@s.whatsapp.net', { conversation: 'mine' }, { key: { remoteJid: '15550002222@s.whatsapp.net', fromMe: true, id: 'MINE' } }),
      from('15550002222@s.whatsapp.net', { reactionMessage: { text: '👍' } }),
    ];
    last().emit('messages.upsert', { messages, type: 'notify' });
    const inbound = events.flatMap((e) => (e.type === 'inbound' ? [e.message] : []));
    const base = { from: '15550002222', pushName: 'Bob', timestamp: new Date(1_700_000_000_000).toISOString(), ref: expect.any(String) };
    expect(inbound).toEqual([
      { ...base, platformMessageId: messages[0]!.key.id, text: 'hi', media: null },
      { ...base, platformMessageId: messages[1]!.key.id, text: 'a link https://x.y', media: null },
      { ...base, platformMessageId: messages[2]!.key.id, text: 'a photo', media: { mimetype: 'image/jpeg', filename: null, size: 1234 } },
      { ...base, platformMessageId: messages[3]!.key.id, text: null, media: { mimetype: 'application/pdf', filename: 'a.pdf', size: 99 } },
      { ...base, platformMessageId: messages[4]!.key.id, text: 'disappearing', media: null },
    ]);
  });

  it('fails a send WhatsApp refuses with 463 as account_restricted, reports the restriction with its end, and its lifting', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    last().open();
    await connection.send(message());
    last().ack({ id: waMessageIdFor('msg-1'), error: '463' });
    await settle();
    // The restriction is reported at once; the receipt once its id is mapped back to ours.
    expect(events.filter((e) => e.type !== 'connected')).toEqual([
      { type: 'restricted', until: null },
      { type: 'receipt', messageId: 'msg-1', status: 'failed', reason: 'account_restricted' },
    ]);
    expect(last().timelockQueries).toBe(1);
    const until = new Date(Date.now() + 86_400_000); // ahead: a refusal reports the end named last while it is
    last().emit('connection.update', { reachoutTimeLock: { isActive: true, timeEnforcementEnds: until } });
    last().emit('connection.update', { reachoutTimeLock: { isActive: true, timeEnforcementEnds: until } });
    last().emit('connection.update', { reachoutTimeLock: { isActive: false } });
    expect(events.filter((e) => e.type === 'restricted' || e.type === 'unrestricted')).toEqual([
      { type: 'restricted', until: null },
      { type: 'restricted', until: until.toISOString() },
      { type: 'unrestricted' },
    ]);
    // Restricted again by a 463, then a send WhatsApp takes: only its receipt says so (the session concludes the
    // restriction is over); a lifting WhatsApp pushes after it is still reported.
    await connection.send(message({ messageId: 'msg-2' }));
    last().ack({ id: waMessageIdFor('msg-2'), error: '463' });
    await connection.send(message({ messageId: 'msg-3' }));
    last().ack({ id: waMessageIdFor('msg-3') });
    await settle();
    expect(events.slice(-3)).toEqual([
      { type: 'restricted', until: null },
      { type: 'receipt', messageId: 'msg-2', status: 'failed', reason: 'account_restricted' },
      { type: 'receipt', messageId: 'msg-3', status: 'sent' },
    ]);
    last().emit('connection.update', { reachoutTimeLock: { isActive: false } });
    expect(events.at(-1)).toEqual({ type: 'unrestricted' });
    // Every refusal is reported, with the end named last while it is ahead (a refused probe pauses the sends again).
    last().emit('connection.update', { reachoutTimeLock: { isActive: true, timeEnforcementEnds: until } });
    for (const id of ['msg-4', 'msg-5']) {
      await connection.send(message({ messageId: id }));
      last().ack({ id: waMessageIdFor(id), error: '463' });
    }
    await settle();
    expect(events.filter((e) => e.type === 'restricted').slice(-3)).toEqual([
      { type: 'restricted', until: until.toISOString() },
      { type: 'restricted', until: until.toISOString() },
      { type: 'restricted', until: until.toISOString() },
    ]);
    expect(events.filter((e) => e.type === 'unrestricted')).toHaveLength(2);
    // An end WhatsApp names that is past on this clock is no end: the restriction reported holds, not reported twice.
    const restrictedBefore = events.filter((e) => e.type === 'restricted').length;
    last().emit('connection.update', { reachoutTimeLock: { isActive: true, timeEnforcementEnds: new Date(Date.now() - 1_000) } });
    await connection.send(message({ messageId: 'msg-6' }));
    last().ack({ id: waMessageIdFor('msg-6'), error: '463' });
    last().emit('connection.update', { reachoutTimeLock: { isActive: true, timeEnforcementEnds: new Date(Date.now() - 1_000) } });
    await settle();
    expect(events.filter((e) => e.type === 'restricted').slice(restrictedBefore)).toEqual([
      { type: 'restricted', until: null },
      { type: 'restricted', until: null },
    ]);
  });

  it('reports a lifting WhatsApp pushes to a connection that heard no refusal (the restriction was heard before a reconnect or on another replica)', async () => {
    const { connect, last, events } = setup();
    await connect();
    last().open();
    last().emit('connection.update', { reachoutTimeLock: { isActive: false } });
    expect(events.filter((e) => e.type === 'restricted' || e.type === 'unrestricted')).toEqual([{ type: 'unrestricted' }]);
  });

  it('marks a received message read with the key it came with (its chat as WhatsApp named it), only while connected', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    last().open();
    const key = { remoteJid: '222222222222222@lid', remoteJidAlt: '15550004444@s.whatsapp.net', fromMe: false, id: 'R1' };
    last().emit('messages.upsert', { type: 'notify', messages: [{ key, message: { conversation: 'read me' }, messageTimestamp: 1_700_000_000 }] });
    await settle();
    const inbound = events.flatMap((e) => (e.type === 'inbound' ? [e.message] : []));
    expect(inbound).toHaveLength(1);
    await connection.markRead(inbound[0]!.ref);
    expect(last().reads).toEqual([{ remoteJid: '222222222222222@lid', id: 'R1', fromMe: false }]);
    await expect(connection.markRead('{"sandbox":true}')).rejects.toThrow('not a WhatsApp message reference');
    await connection.close();
    await expect(connection.markRead(inbound[0]!.ref)).rejects.toThrow('not connected');
  });

  it('reports a chat addressed by LID as the number it maps to, in order, and one with an unknown LID from its LID', async () => {
    const { connect, last, events } = setup();
    await connect();
    last().open();
    last().lids.set('111111111111111@lid', '15550003333:0@s.whatsapp.net');
    // Not through fromObject: the alternate jid is Baileys' own field, not the protobuf's.
    const text = (key: WAMessageKey, conversation: string): WAMessage => ({ key, message: { conversation }, messageTimestamp: 1_700_000_000 });
    last().emit('messages.upsert', {
      type: 'notify',
      messages: [
        // WhatsApp named the number beside the LID (sender_pn), as it mostly does.
        text({ remoteJid: '222222222222222@lid', remoteJidAlt: '15550004444@s.whatsapp.net', fromMe: false, id: 'L1' }, 'with its number'),
        // Only the LID: Baileys' LID store knows the number.
        text({ remoteJid: '111111111111111@lid', fromMe: false, id: 'L2' }, 'known LID'),
        // A phone-number chat after a lookup still comes after it.
        text({ remoteJid: '15550002222@s.whatsapp.net', fromMe: false, id: 'P1' }, 'plain'),
        text({ remoteJid: '333333333333333@lid', fromMe: false, id: 'L3' }, 'unknown LID'),
      ],
    });
    await settle();
    const inbound = events.flatMap((e) => (e.type === 'inbound' ? [[e.message.platformMessageId, e.message.from]] : []));
    expect(inbound).toEqual([
      ['L1', '15550004444'],
      ['L2', '15550003333'],
      ['P1', '15550002222'],
      ['L3', '333333333333333@lid'],
    ]);
  });

  it('reports messages that arrived while offline (Baileys upserts them as append), but not our own sends', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    last().open();
    await connection.send(message());
    const offline = waMessage({
      key: { remoteJid: '15550002222@s.whatsapp.net', fromMe: false, id: 'OFFLINE-1' },
      message: { conversation: 'while you were away' },
      messageTimestamp: 1_700_000_000,
    });
    const ownSend = waMessage({
      key: { remoteJid: '15550001111@s.whatsapp.net', fromMe: true, id: waMessageIdFor('msg-1') },
      message: { conversation: 'hello' },
    });
    last().emit('messages.upsert', { messages: [ownSend, offline], type: 'append' });
    expect(events.filter((e) => e.type === 'inbound')).toEqual([
      {
        type: 'inbound',
        message: {
          platformMessageId: 'OFFLINE-1',
          from: '15550002222',
          pushName: null,
          text: 'while you were away',
          media: null,
          ref: expect.any(String),
          timestamp: new Date(1_700_000_000_000).toISOString(),
        },
      },
    ]);
  });

  it('sends to a group without a number lookup, lists groups and shows typing to a chat', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    last().open();
    const group = '120363025246125486@g.us';
    await connection.send(message({ messageId: 'g-1', to: group, text: 'hi all' }));
    expect(last().lookups).toEqual([]);
    expect(last().sent[0]).toMatchObject({ jid: group, content: { text: 'hi all' } });
    // Each participant's receipt comes as message-receipt.update: the first delivery and the first read count.
    const key = { remoteJid: group, fromMe: true, id: waMessageIdFor('g-1') };
    const receipt = (userJid: string, at: 'receiptTimestamp' | 'readTimestamp') => ({ key, receipt: { userJid, [at]: 1_700_000_000 } });
    last().emit('message-receipt.update', [
      receipt('15550002222@s.whatsapp.net', 'receiptTimestamp'),
      receipt('15550003333@s.whatsapp.net', 'receiptTimestamp'),
    ]);
    last().emit('message-receipt.update', [receipt('15550002222@s.whatsapp.net', 'readTimestamp')]);
    await settle();
    expect(events.slice(1).map((e) => (e.type === 'receipt' ? e.status : e.type))).toEqual(['delivered', 'read']);

    last().groups[group] = { id: group, subject: 'Team', size: 3, participants: [] } as unknown as GroupMetadata;
    expect(await connection.listGroups()).toEqual([{ id: group, subject: 'Team', participants: 3 }]);
    // Polled again within the minute (twice at once, once after): answered from the one fetch.
    const [again] = await Promise.all([connection.listGroups(), connection.listGroups()]);
    expect(await connection.listGroups()).toEqual(again);
    expect(last().groupFetches).toBe(1);
    await connection.setTyping('15550001111', true);
    await connection.setTyping(group, false);
    expect(last().presences).toEqual([
      ['composing', '15550001111@s.whatsapp.net'],
      ['paused', group],
    ]);
  });

  it('reports a group message from its participant, with the group id', async () => {
    const { connect, last, events } = setup();
    await connect();
    last().open();
    const key = { remoteJid: '120363025246125486@g.us', participant: '15550002222@s.whatsapp.net', fromMe: false, id: 'G-1' };
    last().emit('messages.upsert', {
      messages: [waMessage({ key, message: { conversation: 'hello group' }, messageTimestamp: 1_700_000_000 })],
      type: 'notify',
    });
    await settle();
    expect(events.filter((e) => e.type === 'inbound')).toEqual([
      {
        type: 'inbound',
        message: {
          platformMessageId: 'G-1',
          from: '15550002222',
          groupId: '120363025246125486@g.us',
          pushName: null,
          text: 'hello group',
          media: null,
          timestamp: new Date(1_700_000_000_000).toISOString(),
          ref: expect.any(String),
        },
      },
    ]);
  });

  it('closes quietly: the socket ends, its listeners go, and nothing is reported after', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    const socket = last();
    socket.open();
    await connection.close();
    expect(socket.ended).toEqual([undefined]);
    expect(socket.listeners()).toBe(0);
    socket.emit('connection.update', { qr: 'late' });
    socket.ack({ id: waMessageIdFor('msg-1') });
    expect(events).toEqual([{ type: 'connected', number: '15551234567' }]);
    await expect(connection.send(message())).rejects.toThrow(/not connected/);
  });

  it('logs out: unlinks on WhatsApp, wipes the credentials, closes, and reports nothing', async () => {
    const { connect, last, events, auth, authBucket } = setup();
    await auth.state('INST1', linkedCreds()).saveCreds();
    const connection = await connect();
    const socket = last();
    socket.open();
    await connection.logout();
    expect(socket.loggedOut).toBe(true);
    expect(socket.listeners()).toBe(0);
    expect([...authBucket.entries.keys()]).toEqual([]);
    expect(events).toEqual([{ type: 'connected', number: '15551234567' }]);
  });

  it('starts over from fresh creds when the stored ones never finished pairing', async () => {
    const { connect, last, auth, authBucket } = setup();
    const unfinished = Object.assign(initAuthCreds(), { me: { id: '15551234567@s.whatsapp.net', name: '~' } });
    await auth.state('INST1', unfinished).saveCreds();
    await auth.state('INST1', unfinished).state.keys.set({ 'pre-key': { '1': { public: Buffer.alloc(32), private: Buffer.alloc(32) } } });
    await connect();
    expect(last().config.auth.creds.me).toBeUndefined();
    expect(last().config.auth.creds.noiseKey).not.toEqual(unfinished.noiseKey);
    expect([...authBucket.entries.keys()]).toEqual([]);
  });

  it('ends an open connection of the instance when a new one starts, as replaced', async () => {
    const { connect, sockets, events } = setup();
    await connect();
    await connect();
    expect(sockets[0]!.ended).toEqual([undefined]);
    expect(events).toEqual([{ type: 'disconnected', reason: 'replaced' }]);
  });

  it('purges an instance: closes its connection and wipes credentials, keys and sent messages', async () => {
    const { connector, connect, last, auth, authBucket, sentBucket } = setup();
    await auth.state('INST1', linkedCreds()).saveCreds();
    const connection = await connect();
    last().open();
    await connection.send(message());
    await connector.purge('INST1');
    expect(last().ended).toEqual([undefined]);
    expect(authBucket.entries.size).toBe(0);
    expect(sentBucket.entries.size).toBe(0);
  });
});
