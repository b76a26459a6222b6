import { proto, type GroupMetadata } from '@whiskeysockets/baileys';
import { waMessage, settle, setup, message } from '../../../../../test/harness/fakeBaileysSocket';
import { MemoryTextBucket } from './textBucket';
import { waMessageIdFor } from './waMessages';
import type { OutboundMessage } from '../port';

describe('the baileys connector: sends and their receipts', () => {
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

  it('fails a send at once when its socket drops under a number check WhatsApp never answers (retried on the next socket)', async () => {
    const { connect, last } = setup();
    const connection = await connect();
    last().open();
    last().silent = true;
    const sending = connection.send(message({ messageId: 'hung-1', to: '15550003333' }));
    await settle();
    // Baileys' own query would wait 60 s: the close (connection lost) fails it now, and nothing was sent.
    last().closeWith(428, 'Connection Closed');
    await expect(sending).rejects.toThrow(/socket closed under the call/);
    expect(last().sent).toEqual([]);
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
    // Voice notes: push-to-talk; an OGG labelled as the Opus phones play, another audio type as it is.
    await connection.send(media('audio/ogg', { caption: undefined, voiceNote: true }));
    await connection.send(media('audio/mpeg', { caption: undefined, voiceNote: true }));
    expect(last().sent.map((s) => s.content)).toEqual([
      { image: data, mimetype: 'image/png', caption: 'look' },
      { video: data, mimetype: 'video/mp4', caption: 'look' },
      { audio: data, mimetype: 'audio/ogg; codecs=opus' },
      { document: data, mimetype: 'application/pdf', fileName: 'invoice.pdf', caption: 'look' },
      { document: data, mimetype: 'text/csv', fileName: 'file', caption: undefined },
      { audio: data, mimetype: 'audio/ogg; codecs=opus', ptt: true },
      { audio: data, mimetype: 'audio/mpeg', ptt: true },
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
});
