import type { WaEmulator } from '../emulator/types';
import { linkOverEmulator, startBaileysStack, type BaileysStack } from '../harness/baileysStack';
import type { TestStack } from '../harness/stack';
import { eventually } from '../harness/wait';

type HistoryEvent = { type: string; stream: string; data: Record<string, unknown> };

const CARD = 'BEGIN:VCARD\nVERSION:3.0\nFN:Jane Doe\nTEL;type=CELL;waid=4915112345678:+49 151 12345678\nEND:VCARD';

/**
 * Replies, locations, contact cards, reactions, typing and groups through the HTTP API with the real Baileys
 * connector against the WhatsApp Web emulator: what the recipients' phones decrypted, compared with what was sent.
 */
describe('richer sends and groups with the Baileys connector and the WhatsApp Web emulator', () => {
  let baileys: BaileysStack;
  let emulator: WaEmulator;
  let stack: TestStack;
  const typing = { msPerChar: 5, minMs: 150, maxMs: 400 };

  beforeAll(async () => {
    baileys = await startBaileysStack({ typing });
    ({ emulator, stack } = baileys);
  }, 60_000);

  afterAll(() => baileys.close());

  const post = (path: string, body: Record<string, unknown>) => stack.call(path, { method: 'POST', body: JSON.stringify(body) });

  const history = async (id: string, query = ''): Promise<HistoryEvent[]> =>
    (await stack.call(`/v1/history?instance_id=${id}&limit=1000${query}`)).body.events as HistoryEvent[];

  const linkedInstance = (number: string): Promise<string> => linkOverEmulator(baileys, number);

  const sentOk = (id: string, messageId: string) =>
    eventually(
      () => history(id, `&message_id=${messageId}`),
      (events) => events.some((e) => e.type === 'MessageSent' || e.type === 'MessageFailed'),
      20_000,
    );

  const receivedEvent = (id: string, text: string) =>
    eventually(
      async () => (await history(id, '&types=MessageReceived')).find((e) => e.data.text === text),
      (event) => event !== undefined,
      20_000,
    );

  it('sends a location, a contact card, replies and reactions that the phone decrypts as sent', async () => {
    const me = '4915100000201';
    const peer = '4917600000201';
    const id = await linkedInstance(me);

    const location = await post('/v1/send', {
      instance_id: id,
      number: peer,
      type: 'location',
      latitude: 52.5163,
      longitude: 13.3777,
      name: 'Brandenburg Gate',
    });
    expect(location.status).toBe(200);
    const seenLocation = await emulator.waitForReceived((m) => m.toNumber === peer && m.rich.location !== undefined, 20_000);
    expect(seenLocation.rich.location).toEqual({ latitude: 52.5163, longitude: 13.3777, name: 'Brandenburg Gate' });

    const contact = await stack.call(`/v1/send?instance_id=${id}&number=${peer}&type=contact&vcard=${encodeURIComponent(CARD)}`);
    expect(contact.status).toBe(200);
    const seenContact = await emulator.waitForReceived((m) => m.toNumber === peer && m.rich.contact !== undefined, 20_000);
    expect(seenContact.rich.contact).toEqual({ displayName: 'Jane Doe', vcard: CARD });

    // A reply to what the peer wrote: the phone sees the peer's message id as the quoted stanza, with its text.
    const platformId = await emulator.sendText(me, peer, 'Peer', 'Where are you?');
    const inbound = await receivedEvent(id, 'Where are you?');
    expect(inbound?.data.platform_message_id).toBe(platformId);
    const reply = await post('/v1/send', { instance_id: id, number: peer, type: 'text', message: 'At the gate', quoted_message_id: inbound?.data.message_id });
    expect(reply.status).toBe(200);
    const seenReply = await emulator.waitForReceived((m) => m.toNumber === peer && m.text === 'At the gate', 20_000);
    expect(seenReply.rich.quoted).toEqual({ id: platformId, participant: `${peer}@s.whatsapp.net`, text: 'Where are you?' });

    // A reaction on our own reply: keyed by the WhatsApp id the reply went out with.
    const reaction = await post('/v1/send', { instance_id: id, number: peer, type: 'reaction', message_id: reply.body.message_id, emoji: '👍🏽' });
    expect(reaction.status).toBe(200);
    const seenReaction = await emulator.waitForReceived((m) => m.toNumber === peer && m.rich.reaction !== undefined, 20_000);
    expect(seenReaction.rich.reaction).toMatchObject({ emoji: '👍🏽', id: seenReply.id, fromMe: true, remoteJid: `${peer}@s.whatsapp.net` });
    // And one on the peer's message.
    await post('/v1/send', { instance_id: id, number: peer, type: 'reaction', message_id: inbound?.data.message_id, emoji: '❤️' });
    const seenSecond = await emulator.waitForReceived((m) => m.toNumber === peer && m.rich.reaction?.emoji === '❤️', 20_000);
    expect(seenSecond.rich.reaction).toMatchObject({ id: platformId, fromMe: false });
    for (const messageId of [location.body.message_id, contact.body.message_id, reply.body.message_id, reaction.body.message_id] as string[]) {
      expect((await sentOk(id, messageId)).map((e) => e.type)).toContain('MessageSent');
    }
  });

  it('shows composing to the chat before a text, for longer the longer the text, then paused', async () => {
    const me = '4915100000202';
    const peer = '4917600000202';
    const id = await linkedInstance(me);
    const started = emulator.chatStates().length;
    await post('/v1/send', { instance_id: id, number: peer, type: 'text', message: 'x'.repeat(200) });
    const seen = await emulator.waitForReceived((m) => m.toNumber === peer && m.text === 'x'.repeat(200), 20_000);
    const states = emulator
      .chatStates()
      .slice(started)
      .filter((s) => s.to === `${peer}@s.whatsapp.net`);
    expect(states.map((s) => s.state)).toEqual(['composing', 'paused']);
    const [composing, paused] = states.map((s) => s.at) as [number, number];
    expect(paused - composing).toBeGreaterThanOrEqual(typing.maxMs - 20);
    expect(seen.at).toBeGreaterThanOrEqual(paused);
  });

  it('lists the groups the account is in and sends to one with sender keys every participant phone decrypts', async () => {
    const me = '4915100000203';
    const [ana, ben] = ['4917600000203', '4917600000204'];
    const id = await linkedInstance(me);
    const team = emulator.createGroup('Team', [ana, me, ben]);
    emulator.createGroup('Not ours', [ana, ben]);
    const listed = await stack.call(`/v1/list_groups?instance_id=${id}`);
    expect(listed.status).toBe(200);
    expect(listed.body.groups).toEqual([{ id: team, subject: 'Team', participants: 3 }]);

    const sent = await post('/v1/send_group', { instance_id: id, group_id: team, type: 'text', message: 'Stand-up in 5' });
    expect(sent.status).toBe(200);
    for (const phone of [ana, ben, me]) {
      const copy = await emulator.waitForReceived((m) => m.to === team && m.toNumber === phone && m.text === 'Stand-up in 5', 20_000);
      expect(copy.error).toBeUndefined();
    }
    // Each participant's phone sends receipts (with `participant`): the first delivery and read count.
    const receipts = await eventually(
      () => history(id, `&message_id=${sent.body.message_id as string}`),
      (events) => events.some((e) => e.type === 'MessageRead'),
      20_000,
    );
    expect(receipts.map((e) => [e.type, e.data.to])).toEqual([
      ['MessageAccepted', team],
      ['MessageSent', team],
      ['MessageDelivered', team],
      ['MessageRead', team],
    ]);

    // The second send reuses the sender key (no new distribution) and still decrypts; a location in the group too.
    const second = await stack.call(`/v1/send_group?instance_id=${id}&group_id=${encodeURIComponent(team)}&type=location&latitude=48.1&longitude=11.5`);
    expect(second.status).toBe(200);
    const seen = await emulator.waitForReceived((m) => m.to === team && m.toNumber === ben && m.rich.location !== undefined, 20_000);
    expect(seen.rich.location).toMatchObject({ latitude: 48.1, longitude: 11.5 });
  });

  it('reports a group message as message.received with the group id and the participant, and replies to it in the group', async () => {
    const me = '4915100000205';
    const ana = '4917600000205';
    const id = await linkedInstance(me);
    const team = emulator.createGroup('Crew', [ana, me]);
    const platformId = await emulator.sendGroupText(me, team, ana, 'Ana', 'Who brings the cake?');
    const inbound = await receivedEvent(id, 'Who brings the cake?');
    expect(inbound?.data).toMatchObject({ from: ana, group_id: team, push_name: 'Ana', platform_message_id: platformId });

    const reply = await post('/v1/send_group', { instance_id: id, group_id: team, type: 'text', message: 'I do', quoted_message_id: inbound?.data.message_id });
    expect(reply.status).toBe(200);
    const seen = await emulator.waitForReceived((m) => m.to === team && m.toNumber === ana && m.text === 'I do', 20_000);
    expect(seen.rich.quoted).toEqual({ id: platformId, participant: `${ana}@s.whatsapp.net`, text: 'Who brings the cake?' });

    // A reaction to Ana's group message names her as the author of the message reacted to.
    const reaction = await post('/v1/send_group', { instance_id: id, group_id: team, type: 'reaction', message_id: inbound?.data.message_id, emoji: '🎂' });
    expect(reaction.status).toBe(200);
    const reacted = await emulator.waitForReceived((m) => m.to === team && m.toNumber === ana && m.rich.reaction !== undefined, 20_000);
    expect(reacted.rich.reaction).toEqual({ emoji: '🎂', id: platformId, fromMe: false, remoteJid: team, participant: `${ana}@s.whatsapp.net` });
  });

  it('works the same in a LID-addressed group: sends decrypted by every phone, read receipts, and inbound under the number', async () => {
    const me = '4915100000206';
    const [ana, ben] = ['4917600000206', '4917600000207'];
    const id = await linkedInstance(me);
    const team = emulator.createGroup('LID team', [ana, me, ben], { addressing: 'lid' });
    const listed = await stack.call(`/v1/list_groups?instance_id=${id}`);
    expect(listed.body.groups).toEqual([{ id: team, subject: 'LID team', participants: 3 }]);

    const sent = await post('/v1/send_group', { instance_id: id, group_id: team, type: 'text', message: 'Hello by LID' });
    expect(sent.status).toBe(200);
    for (const phone of [ana, ben]) {
      const copy = await emulator.waitForReceived((m) => m.to === team && m.toNumber === phone && m.text === 'Hello by LID', 20_000);
      expect(copy.error).toBeUndefined();
    }
    const receipts = await eventually(
      () => history(id, `&message_id=${sent.body.message_id as string}`),
      (events) => events.some((e) => e.type === 'MessageRead'),
      20_000,
    );
    expect(receipts.map((e) => e.type)).toEqual(['MessageAccepted', 'MessageSent', 'MessageDelivered', 'MessageRead']);

    await emulator.sendGroupText(me, team, ben, 'Ben', 'Written from a LID');
    const inbound = await receivedEvent(id, 'Written from a LID');
    expect(inbound?.data).toMatchObject({ from: ben, group_id: team, push_name: 'Ben' });
    // Without the number beside the LID it comes from Baileys' LID store (learnt from usync: the group send's device
    // query, a number check), and a LID nobody mapped yet is reported from the LID rather than lost.
    expect((await stack.call(`/v1/check_number?instance_id=${id}&number=${ana}`)).body.numbers).toEqual([
      { number: ana, exists: true, jid: expect.any(String) },
    ]);
    await emulator.sendGroupText(me, team, ana, 'Ana', 'No number beside', { withoutPn: true });
    expect((await receivedEvent(id, 'No number beside'))?.data).toMatchObject({ from: ana, group_id: team });
    const stranger = '4917600000208';
    const wider = emulator.createGroup('Wider', [stranger, me], { addressing: 'lid' });
    await emulator.sendGroupText(me, wider, stranger, 'Cy', 'Unknown LID', { withoutPn: true });
    expect((await receivedEvent(id, 'Unknown LID'))?.data.from).toMatch(/^\d+@lid$/);
  });
});
