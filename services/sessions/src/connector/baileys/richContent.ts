import type { AnyMessageContent, MiscMessageGenerationOptions, WAMessage, WAMessageKey } from '@whiskeysockets/baileys';
import type { MessageRef, OutboundMessage } from '../port';
import { isGroupJid, jidOf, waMessageIdFor } from './waMessages';

/** The jid of a chat: a group id as it is, a number as its user jid. */
export const chatJidOf = (chat: string): string => (isGroupJid(chat) ? chat : jidOf(chat));

/** The WhatsApp key of a message of the instance: ours by the WhatsApp id we gave it, a received one by its own. */
export const keyOf = (ref: MessageRef): WAMessageKey => ({
  remoteJid: chatJidOf(ref.chat),
  fromMe: ref.fromMe,
  id: ref.fromMe ? waMessageIdFor(ref.id) : ref.id,
  ...(ref.participant ? { participant: jidOf(ref.participant) } : {}),
});

/**
 * The message a reply quotes, as Baileys copies it into the reply's contextInfo (stanzaId, participant and the
 * quoted text the recipient's phone shows above the reply).
 */
export const quotedMessageOf = (ref: MessageRef): WAMessage => ({ key: keyOf(ref), message: { conversation: ref.text ?? '' } });

/** The options of a send: our WhatsApp id, and the quoted message of a reply. */
export const sendOptionsOf = (message: OutboundMessage, waId: string): MiscMessageGenerationOptions => ({
  messageId: waId,
  ...(message.quoted ? { quoted: quotedMessageOf(message.quoted) } : {}),
});

/** Baileys' content of a location, contact card or reaction; null for text and media (see `outboundContent`). */
export const richContentOf = (message: OutboundMessage): AnyMessageContent | null => {
  const { location, contact, reaction } = message;
  if (location) {
    return { location: { degreesLatitude: location.latitude, degreesLongitude: location.longitude, ...(location.name ? { name: location.name } : {}) } };
  }
  if (contact) return { contacts: { displayName: contact.displayName, contacts: [{ displayName: contact.displayName, vcard: contact.vcard }] } };
  if (reaction) return { react: { text: reaction.emoji, key: keyOf(reaction.target) } };
  return null;
};
