import { createHash } from 'node:crypto';
import { normalizeMessageContent, proto, toNumber, type AnyMessageContent, type WAMessage, type WAMessageKey } from '@whiskeysockets/baileys';
import { ACCOUNT_RESTRICTED, type InboundMessage, type OutboundMessage, type ReceiptStatus } from '../port';
import { inboundRefOf, mediaFieldOf, nonEmpty } from './inboundRef';

const USER_SERVER = '@s.whatsapp.net';
const LID_SERVER = '@lid';
const GROUP_SERVER = '@g.us';

/** A group's jid (`…@g.us`), not a person's. */
export const isGroupJid = (jid: string): boolean => jid.endsWith(GROUP_SERVER);

/**
 * The WhatsApp id of one of our messages: derived from our id, so a send repeated after a crash carries the same
 * id and the platform takes it once. Shaped like the ids WhatsApp Web makes ('3EB0' + 18 upper-case hex).
 */
export const waMessageIdFor = (messageId: string): string => `3EB0${createHash('sha256').update(messageId).digest('hex').slice(0, 18).toUpperCase()}`;

/** The jid of a number (international digits). */
export const jidOf = (number: string): string => {
  if (!/^\d+$/.test(number)) throw new Error(`The recipient must be international digits without '+', got '${number}'`);
  return `${number}${USER_SERVER}`;
};

/** The number of a user jid or device id: '15551234567:12@s.whatsapp.net' -> '15551234567'. */
export const numberOf = (jid: string): string => jid.split(/[:@]/, 1)[0] ?? '';

type MediaKind = 'image' | 'video' | 'audio' | 'document';

export const mediaKindOf = (mimetype: string): MediaKind => {
  const type = mimetype.trim().toLowerCase();
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('audio/')) return 'audio';
  return 'document';
};

/** What Baileys sends for our message: text without a link preview (no lookup of the link), or media by kind. */
export const outboundContent = (message: OutboundMessage): AnyMessageContent => {
  const { media } = message;
  if (!media) {
    if (message.text === undefined) throw new Error('A message needs text or media');
    return { text: message.text, linkPreview: null };
  }
  const caption = media.caption ?? message.text;
  const { data, mimetype } = media;
  switch (mediaKindOf(mimetype)) {
    case 'image':
      return { image: data, mimetype, caption };
    case 'video':
      return { video: data, mimetype, caption };
    // Audio messages have no caption on WhatsApp; a voice note is audio marked push-to-talk (`ptt`). Phones play voice
    // notes as OGG Opus, labelled so; the media fetcher keeps a type without its parameters (`audio/ogg`).
    case 'audio':
      if (!media.voiceNote) return { audio: data, mimetype };
      return { audio: data, mimetype: mimetype === 'audio/ogg' ? 'audio/ogg; codecs=opus' : mimetype, ptt: true };
    case 'document':
      return { document: data, mimetype, fileName: media.filename ?? 'file', caption };
  }
};

const RECEIPTS: Partial<Record<proto.WebMessageInfo.Status, ReceiptStatus>> = {
  [proto.WebMessageInfo.Status.ERROR]: 'failed',
  [proto.WebMessageInfo.Status.DELIVERY_ACK]: 'delivered',
  [proto.WebMessageInfo.Status.READ]: 'read',
  [proto.WebMessageInfo.Status.PLAYED]: 'read',
};

/** The receipt a message status reports; null for the ones we do not report (pending, server ack from own devices). */
export const receiptOf = (status: number | null | undefined): ReceiptStatus | null =>
  status === null || status === undefined ? null : (RECEIPTS[status as proto.WebMessageInfo.Status] ?? null);

/** WhatsApp's answer to a send from a restricted account (an ack with error="463"). */
export const ACCOUNT_RESTRICTED_CODE = '463';

/** The reason a platform error code gives a failed message. */
export const platformErrorReason = (code: string | null | undefined): string => {
  if (code === ACCOUNT_RESTRICTED_CODE) return ACCOUNT_RESTRICTED;
  return code ? `platform_error_${code}` : 'platform_error';
};

/**
 * Whether `sendMessage` failed because the recipient has no WhatsApp account: the pre-key fetch for a number that is
 * not on WhatsApp answers `item-not-found` (404), which Baileys throws as a Boom.
 */
export const isRecipientUnknown = (error: unknown): boolean => {
  if (typeof error !== 'object' || error === null) return false;
  const { data, message } = error as { data?: unknown; message?: unknown };
  return data === 404 || message === 'item-not-found';
};

interface MediaOf {
  mimetype: string;
  filename: string | null;
  size: number;
  caption: string | null;
}

const mediaOf = (content: proto.IMessage): MediaOf | null => {
  const found = mediaFieldOf(content);
  if (!found) return null;
  const { kind, media, fallback } = found;
  return {
    mimetype: nonEmpty(media.mimetype) ?? fallback,
    filename: kind === 'document' && 'fileName' in media ? nonEmpty(media.fileName) : null,
    size: toNumber(media.fileLength ?? 0),
    caption: 'caption' in media ? nonEmpty(media.caption) : null,
  };
};

/**
 * The phone-number jid of a 1:1 chat. WhatsApp addresses many chats by LID (a per-account id that hides the
 * number): Baileys 7 then gives the number's jid beside it (`remoteJidAlt`, from the stanza's `sender_pn`).
 * Null for a chat known by LID alone (see `lidOf`) and for anything that is not a 1:1 chat.
 */
export const phoneJidOf = (key: WAMessageKey): string | null => {
  for (const jid of [key.remoteJid, key.remoteJidAlt]) if (jid?.endsWith(USER_SERVER)) return jid;
  return null;
};

/** The group of a group message ('…@g.us'), or null. */
const groupIdOf = (key: WAMessageKey): string | null => (key.remoteJid && isGroupJid(key.remoteJid) ? key.remoteJid : null);

/** Who wrote a group message, by phone number: the participant, or its number beside a LID (`participantAlt`). */
const participantJidOf = (key: WAMessageKey): string | null => {
  for (const jid of [key.participant, key.participantAlt]) if (jid?.endsWith(USER_SERVER)) return jid;
  return null;
};

/**
 * The LID jid of a sender known by LID without its number beside it (a 1:1 chat, or a group's participant): the
 * number is to be looked up.
 */
export const unresolvedLidOf = (key: WAMessageKey): string | null => {
  if (groupIdOf(key)) return key.participant?.endsWith(LID_SERVER) && participantJidOf(key) === null ? key.participant : null;
  const jid = key.remoteJid;
  return jid?.endsWith(LID_SERVER) && phoneJidOf(key) === null ? jid : null;
};

/** Records the number a LID sender maps to where `inboundOf` reads it (beside the chat, or beside the participant). */
export const setSenderNumber = (key: WAMessageKey, phoneJid: string): void => {
  if (groupIdOf(key)) key.participantAlt = phoneJid;
  else key.remoteJidAlt = phoneJid;
};

/**
 * The inbound message a Baileys message is, or null when it is not one we report: our own, not from a 1:1 chat or a
 * group (broadcasts, status), or without text or media (reactions, protocol messages). A group message is reported
 * from the participant who wrote it, with the group's id.
 * A chat addressed by LID counts as the number it maps to, so one sender has one number in every event; one whose
 * number is unknown is still reported, from its LID jid ('…@lid'), rather than lost.
 */
export const inboundOf = (message: WAMessage, now: () => Date = () => new Date()): InboundMessage | null => {
  const { key } = message;
  const groupId = groupIdOf(key);
  const phoneJid = groupId ? participantJidOf(key) : phoneJidOf(key);
  const from = phoneJid ? numberOf(phoneJid) : groupId ? key.participant?.replace(/:\d+@/, '@') : unresolvedLidOf(key)?.replace(/:\d+@/, '@');
  if (key.fromMe || !key.id || !from) return null;
  const content = normalizeMessageContent(message.message);
  if (!content) return null;
  const media = mediaOf(content);
  const text = nonEmpty(content.conversation) ?? nonEmpty(content.extendedTextMessage?.text) ?? media?.caption ?? null;
  if (text === null && !media) return null;
  const seconds = toNumber(message.messageTimestamp ?? 0);
  return {
    platformMessageId: key.id,
    from,
    ...(groupId ? { groupId } : {}),
    pushName: nonEmpty(message.pushName),
    text,
    media: media ? { mimetype: media.mimetype, filename: media.filename, size: media.size } : null,
    timestamp: (seconds > 0 ? new Date(seconds * 1000) : now()).toISOString(),
    ref: inboundRefOf(key, content),
  };
};
