import { initAuthCreds } from '@whiskeysockets/baileys';
import { settle, linkedCreds, setup, message } from '../../../../../test/harness/fakeBaileysSocket';
import { QR_REFS_ENDED } from './disconnectPolicy';
import { waMessageIdFor } from './waMessages';

describe('the baileys connector: the life of a connection', () => {
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
