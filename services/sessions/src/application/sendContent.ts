import {
  assertEmoji,
  assertGroupId,
  assertLocation,
  assertMessageId,
  assertVcard,
  conflict,
  exceedsCharacters,
  invalidArgument,
  isPhoneNumber,
  isSendType,
  LIMITS,
  messageStream,
  notFound,
  type EventStore,
  type MessageAccepted,
  type MessageLocation,
} from '@wagw/lib';
import type { MessageRef } from '../connector/port';

/** What a send carries besides its recipient (the SendRequest's content fields; '' and null mean absent). */
export interface SendContent {
  type: string;
  text: string;
  mediaUrl: string;
  filename: string;
  quotedMessageId: string;
  location: MessageLocation | null;
  vcard: string;
  reactionMessageId: string;
  emoji: string;
  /** type media: send the audio as a voice note. */
  voiceNote: boolean;
}

/** The chat a send goes to: a number (`send`) or a group id (`send_group`), exactly one of them. */
export const recipientOf = (to: string, groupId: string): string => {
  if (groupId) {
    if (to) throw invalidArgument('invalid_recipient', 'Give either number or group_id, not both');
    assertGroupId(groupId);
    return groupId;
  }
  if (!isPhoneNumber(to)) throw invalidArgument('invalid_number', 'number must be 7 to 15 digits in international form, without + or separators');
  return to;
};

/** The content's own rules (no I/O): each fault its 400 with a clear code. */
export const assertContent = (content: SendContent): void => {
  const { type, text } = content;
  if (!isSendType(type)) throw invalidArgument('invalid_type', 'type must be text, media, location, contact or reaction');
  if (exceedsCharacters(text, LIMITS.text)) throw invalidArgument('message_too_long', `message must be at most ${LIMITS.text} characters`);
  if (type === 'text' && text.trim() === '') throw invalidArgument('missing_message', 'message is required for type text');
  if (type === 'location') {
    if (!content.location) throw invalidArgument('missing_location', 'latitude and longitude are required for type location');
    assertLocation(content.location);
  }
  if (type === 'contact') assertVcard(content.vcard);
  if (type === 'reaction') {
    if (!content.reactionMessageId) throw invalidArgument('missing_message_id', 'message_id (the message reacted to) is required for type reaction');
    assertMessageId(content.reactionMessageId, 'message_id');
    assertEmoji(content.emoji);
    if (content.quotedMessageId) throw invalidArgument('invalid_quote', 'A reaction cannot quote a message');
  }
  if (content.quotedMessageId) assertMessageId(content.quotedMessageId, 'quoted_message_id');
  if (content.voiceNote) {
    if (type !== 'media') throw invalidArgument('invalid_voice_note', 'voice_note is for type media (an audio file, sent as a voice message)');
    // WhatsApp shows no caption on audio: refused rather than dropped.
    if (text) throw invalidArgument('invalid_voice_note', 'A voice note carries no caption: send the message as a text of its own');
  }
};

/** The message `messageId` of the instance as a send refers to it, or null when the history has no such message. */
export const messageRefOf = async (events: EventStore, instanceId: string, messageId: string): Promise<MessageRef | null> => {
  const commits = await events.readStream(messageStream(instanceId, messageId));
  const event = commits[0]?.events[0];
  if (event?.type === 'MessageAccepted') {
    // A send of ours that failed never reached WhatsApp: a reply to it or a reaction would point at nothing there.
    if (commits.some((c) => c.events.some((e) => e.type === 'MessageFailed'))) throw new ReferredMessageNotSent(messageId);
    const data = event.data as MessageAccepted['data'];
    return { fromMe: true, id: messageId, chat: data.to, participant: null, text: data.text };
  }
  if (event?.type === 'MessageReceived') {
    const { platform_message_id: platformId, group_id: groupId, from, text } = event.data;
    // Received before the platform's id was kept: nothing to point WhatsApp at.
    if (typeof platformId !== 'string') throw invalidArgument('message_not_quotable', `Message ${messageId} was received before replies to it were possible`);
    const group = typeof groupId === 'string' ? groupId : null;
    return {
      fromMe: false,
      id: platformId,
      chat: group ?? String(from),
      participant: group ? String(from) : null,
      text: typeof text === 'string' ? text : null,
    };
  }
  return null;
};

/** A reply's or a reaction's message is a send of ours that failed (`message_not_sent` at accept; the send fails in dispatch). */
export class ReferredMessageNotSent extends Error {
  /** The reason a send referring to it fails with, when it failed after that send was accepted. */
  static readonly reason = 'referred_message_not_sent';

  constructor(readonly messageId: string) {
    super(`message ${messageId} failed to send: WhatsApp never had it`);
  }
}

/** A message a send refers to: it must be in the same chat (404 when the instance has no such message). */
export const referredMessage = async (events: EventStore, instanceId: string, messageId: string, chat: string, field: string): Promise<MessageRef> => {
  const ref = await messageRefOf(events, instanceId, messageId).catch((error: unknown) => {
    if (error instanceof ReferredMessageNotSent) throw conflict('message_not_sent', `${field}: ${error.message}; nothing to reply or react to`);
    throw error;
  });
  if (!ref) throw notFound('message_not_found', `${field}: this instance has no message ${messageId}`);
  if (ref.chat !== chat) throw invalidArgument('message_not_in_chat', `${field}: message ${messageId} is in another chat than this send`);
  return ref;
};

/** The content fields of MessageAccepted: the older fields as before, the newer ones only when used. */
export const acceptedContent = (content: SendContent): Omit<MessageAccepted['data'], 'message_id' | 'to'> => {
  const type = content.type as MessageAccepted['data']['type'];
  return {
    type,
    text: content.text || null,
    media_url: type === 'media' ? content.mediaUrl : null,
    filename: content.filename || null,
    ...(content.quotedMessageId ? { quoted_message_id: content.quotedMessageId } : {}),
    ...(type === 'location' && content.location ? { location: content.location } : {}),
    ...(type === 'contact' ? { vcard: content.vcard } : {}),
    ...(type === 'reaction' ? { reaction: { message_id: content.reactionMessageId, emoji: content.emoji } } : {}),
    ...(content.voiceNote ? { voice_note: true } : {}),
  };
};
