import {
  InMemoryEventStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  messageEvent,
  messageStream,
  StoreSpecification,
  type ErrorKind,
  type ExpectedCommit,
  type GivenCommit,
  type InstanceEvent,
  type MessageEvent,
  type MessageReceived,
} from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { InstanceRegistry } from '../registry/instanceRegistry';
import { MessagesService, type SendCommand } from './messagesService';

// Application tests of the richer sends (replies, locations, contact cards, reactions, groups): the real service and
// registry on the in-memory store. The messages they refer to are read from the instance's history.

const NOW = '2026-11-23T10:00:00.000Z';
const ID = instanceIdFor('acme', 'rich-1');
const PEER = '4917612345678';
const GROUP = '120363025246125486@g.us';
const OURS = `m_${'a'.repeat(32)}`;
const THEIRS = `in_${'b'.repeat(24)}`;
const OLD = `in_${'c'.repeat(24)}`;
const IN_GROUP = `in_${'d'.repeat(24)}`;
/** A send of ours that failed: WhatsApp never had it. */
const FAILED = `m_${'e'.repeat(32)}`;
const CARD = 'BEGIN:VCARD\nVERSION:3.0\nFN:Jane Doe\nEND:VCARD';

const instance = (...events: InstanceEvent[]): GivenCommit => ({ stream: instanceStream(ID), events });
const message = (messageId: string, event: MessageEvent): GivenCommit => ({ stream: messageStream(ID, messageId), events: [event] });
const received = (messageId: string, data: Partial<MessageReceived['data']>): GivenCommit =>
  message(
    messageId,
    messageEvent('MessageReceived', NOW, { message_id: messageId, from: PEER, push_name: null, text: 'hi', media: null, timestamp: NOW, ...data }),
  );

const history: GivenCommit[] = [
  instance(instanceEvent('InstanceCreated', NOW, { instance_id: ID, account: 'acme' }), instanceEvent('InstanceLinked', NOW, { number: '4915112345678' })),
  message(
    OURS,
    messageEvent('MessageAccepted', NOW, { message_id: OURS, to: PEER, type: 'text', text: 'Order 4711 shipped', media_url: null, filename: null }),
  ),
  received(THEIRS, { platform_message_id: '3EB0THEIRS', group_id: null }),
  // Received before the platform's id was kept.
  received(OLD, {}),
  received(IN_GROUP, { platform_message_id: '3EB0GROUP', group_id: GROUP }),
  message(FAILED, messageEvent('MessageAccepted', NOW, { message_id: FAILED, to: PEER, type: 'text', text: 'lost', media_url: null, filename: null })),
  message(FAILED, messageEvent('MessageFailed', NOW, { message_id: FAILED, to: PEER, reason: 'send_failed' })),
];

const send = (changes: Partial<SendCommand> = {}): SendCommand => ({
  account: 'acme',
  instanceId: ID,
  to: PEER,
  groupId: '',
  type: 'text',
  text: 'hello',
  mediaUrl: '',
  filename: '',
  idempotencyKey: '',
  quotedMessageId: '',
  location: null,
  vcard: '',
  reactionMessageId: '',
  emoji: '',
  voiceNote: false,
  ...changes,
});

const accepted = (messageId: string, data: Record<string, unknown>): ExpectedCommit => ({
  stream: messageStream(ID, messageId),
  events: [{ type: 'MessageAccepted', data: { message_id: messageId, to: PEER, type: 'text', text: 'hello', media_url: null, filename: null, ...data } }],
});

describe('MessagesService.accept: replies, locations, contacts, reactions, groups (application, in-memory store)', () => {
  let store: InMemoryEventStore;
  let registry: InstanceRegistry;
  let service: MessagesService;
  let given: ReturnType<typeof StoreSpecification.for>;

  beforeEach(() => {
    store = new InMemoryEventStore();
    registry = new InstanceRegistry(store, testLogger());
    registry.start();
    service = new MessagesService(store, registry, async () => undefined);
    given = StoreSpecification.for(store);
  });

  afterEach(() => registry.stop());

  it('stores a location, a contact card, a reply and a reaction with their fields, and only those', async () => {
    const location = { latitude: 52.5163, longitude: 13.3777, name: 'Brandenburg Gate' };
    await given(...history)
      .when(async () => [
        await service.accept(send({ type: 'location', text: '', location })),
        await service.accept(send({ type: 'contact', text: '', vcard: CARD })),
        await service.accept(send({ text: 'Yes', quotedMessageId: THEIRS })),
        await service.accept(send({ type: 'reaction', text: '', reactionMessageId: OURS, emoji: '👍🏽' })),
      ])
      .then(([loc, card, reply, reaction]) => ({
        commits: [
          accepted(loc!, { type: 'location', text: null, location }),
          accepted(card!, { type: 'contact', text: null, vcard: CARD }),
          accepted(reply!, { text: 'Yes', quoted_message_id: THEIRS }),
          accepted(reaction!, { type: 'reaction', text: null, reaction: { message_id: OURS, emoji: '👍🏽' } }),
        ],
      }));
  });

  it('sends to a group by its id (the same path as a number), and reacts to a message in it', async () => {
    await given(...history)
      .when(async () => [
        await service.accept(send({ to: '', groupId: GROUP })),
        await service.accept(send({ to: '', groupId: GROUP, type: 'reaction', text: '', reactionMessageId: IN_GROUP, emoji: '🎉' })),
      ])
      .then(([text, reaction]) => ({
        commits: [
          accepted(text!, { to: GROUP }),
          accepted(reaction!, { to: GROUP, type: 'reaction', text: null, reaction: { message_id: IN_GROUP, emoji: '🎉' } }),
        ],
      }));
  });

  it('stores a voice note as a media send marked voice_note, a plain file without the field', async () => {
    const mediaUrl = 'https://files.example/hello.ogg';
    await given(...history)
      .when(async () => [
        await service.accept(send({ type: 'media', text: '', mediaUrl, voiceNote: true })),
        await service.accept(send({ type: 'media', text: '', mediaUrl })),
      ])
      .then(([voice, file]) => ({
        commits: [
          accepted(voice!, { type: 'media', text: null, media_url: mediaUrl, voice_note: true }),
          accepted(file!, { type: 'media', text: null, media_url: mediaUrl }),
        ],
      }));
  });

  const refusals: Array<[string, Partial<SendCommand>, ErrorKind, string]> = [
    ['a message the instance does not have', { quotedMessageId: `m_${'0'.repeat(32)}` }, 'not_found', 'message_not_found'],
    [
      'a message of another chat',
      { to: '4917600000000', type: 'reaction', text: '', reactionMessageId: OURS, emoji: '👍' },
      'invalid_argument',
      'message_not_in_chat',
    ],
    ['a group message, from the 1:1 chat', { type: 'reaction', text: '', reactionMessageId: IN_GROUP, emoji: '👍' }, 'invalid_argument', 'message_not_in_chat'],
    ['a message received before replies were possible', { quotedMessageId: OLD }, 'invalid_argument', 'message_not_quotable'],
    ['a reply to a send that failed', { quotedMessageId: FAILED }, 'conflict', 'message_not_sent'],
    ['a reaction to a send that failed', { type: 'reaction', text: '', reactionMessageId: FAILED, emoji: '👍' }, 'conflict', 'message_not_sent'],
    ['both a number and a group', { groupId: GROUP }, 'invalid_argument', 'invalid_recipient'],
    ['a group id of another form', { to: '', groupId: '4915112345678@s.whatsapp.net' }, 'invalid_argument', 'invalid_group_id'],
    ['a latitude out of range', { type: 'location', location: { latitude: -91, longitude: 0, name: null } }, 'invalid_argument', 'invalid_latitude'],
    ['a longitude out of range', { type: 'location', location: { latitude: 0, longitude: 180.01, name: null } }, 'invalid_argument', 'invalid_longitude'],
    ['a location without coordinates', { type: 'location' }, 'invalid_argument', 'missing_location'],
    ['a vCard over its cap', { type: 'contact', vcard: `BEGIN:VCARD\nNOTE:${'é'.repeat(4_100)}\nEND:VCARD` }, 'invalid_argument', 'vcard_too_large'],
    ['two emoji', { type: 'reaction', reactionMessageId: OURS, emoji: '👍👍' }, 'invalid_argument', 'invalid_emoji'],
    ['a reaction without message_id', { type: 'reaction', emoji: '👍' }, 'invalid_argument', 'missing_message_id'],
    ['a reaction that quotes', { type: 'reaction', reactionMessageId: OURS, emoji: '👍', quotedMessageId: THEIRS }, 'invalid_argument', 'invalid_quote'],
    ['a voice note of type text', { voiceNote: true }, 'invalid_argument', 'invalid_voice_note'],
    [
      'a voice note with a caption (WhatsApp shows none on audio)',
      { type: 'media', mediaUrl: 'https://files.example/a.ogg', voiceNote: true },
      'invalid_argument',
      'invalid_voice_note',
    ],
  ];
  it.each(refusals)('refuses %s, storing nothing', async (_name, changes, kind, code) => {
    await given(...history)
      .when(() => service.accept(send(changes)))
      .thenThrows({ kind, code });
  });
});
