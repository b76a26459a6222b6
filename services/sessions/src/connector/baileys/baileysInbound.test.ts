import { type proto, type WAMessage, type WAMessageKey } from '@whiskeysockets/baileys';
import { waMessage, settle, setup, message } from '../../../../../test/harness/fakeBaileysSocket';
import { waMessageIdFor } from './waMessages';

describe('the baileys connector: received messages', () => {
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
    // A read receipt WhatsApp never answers fails once its socket is dropped, not at Baileys' 60 s time-out.
    last().silent = true;
    const reading = connection.markRead(inbound[0]!.ref);
    await settle();
    last().closeWith(428, 'Connection Closed');
    await expect(reading).rejects.toThrow(/socket closed under the call/);
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

  it('reports a message whose LID lookup ends after the connection closed (WhatsApp was told it arrived)', async () => {
    const { connect, last, events } = setup();
    const connection = await connect();
    last().open();
    let answer: (jid: string) => void = () => undefined;
    last().signalRepository.lidMapping.getPNForLID = () => new Promise<string>((resolve) => (answer = resolve));
    last().emit('messages.upsert', {
      type: 'notify',
      messages: [
        { key: { remoteJid: '111111111111111@lid', fromMe: false, id: 'L9' }, message: { conversation: 'last words' }, messageTimestamp: 1_700_000_000 },
      ],
    });
    await connection.close();
    answer('15550003333:0@s.whatsapp.net');
    await settle();
    expect(events.filter((e) => e.type === 'inbound')).toMatchObject([{ message: { platformMessageId: 'L9', from: '15550003333', text: 'last words' } }]);
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
});
