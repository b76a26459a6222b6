import { normalizeMessageContent, type proto } from '@whiskeysockets/baileys';

/** What a phone shows of a message besides its text and media: a location, a contact card, a reaction, a reply. */
export interface RichContent {
  location?: { latitude: number; longitude: number; name: string | undefined };
  contact?: { displayName: string | undefined; vcard: string | undefined };
  /** A reaction: the emoji, and the key of the message reacted to. */
  reaction?: { emoji: string; id: string | undefined; fromMe: boolean; remoteJid: string | undefined; participant: string | undefined };
  /** A reply: contextInfo's quoted message id (stanzaId), its author and the quoted text. */
  quoted?: { id: string; participant: string | undefined; text: string | undefined };
}

// Decoded protobuf messages answer '' for unset strings.
const set = (value: string | null | undefined): string | undefined => (value ? value : undefined);

const contextOf = (content: proto.IMessage): proto.IContextInfo | null | undefined =>
  content.extendedTextMessage?.contextInfo ??
  content.locationMessage?.contextInfo ??
  content.contactMessage?.contextInfo ??
  content.contactsArrayMessage?.contextInfo ??
  content.imageMessage?.contextInfo ??
  content.documentMessage?.contextInfo;

/** The rich parts of a decrypted message, as the recipient's phone reads them. */
export const richContentOf = (message: proto.IMessage | undefined): RichContent => {
  const content = normalizeMessageContent(message);
  if (!content) return {};
  const rich: RichContent = {};
  const { locationMessage: location, contactMessage: contact, contactsArrayMessage: contacts, reactionMessage: reaction } = content;
  if (location) rich.location = { latitude: location.degreesLatitude ?? 0, longitude: location.degreesLongitude ?? 0, name: set(location.name) };
  const card = contact ?? contacts?.contacts?.[0];
  if (card) rich.contact = { displayName: set(card.displayName), vcard: set(card.vcard) };
  if (reaction) {
    const { key } = reaction;
    rich.reaction = { emoji: reaction.text ?? '', id: set(key?.id), fromMe: !!key?.fromMe, remoteJid: set(key?.remoteJid), participant: set(key?.participant) };
  }
  const context = contextOf(content);
  if (context?.stanzaId) {
    const quoted = context.quotedMessage;
    rich.quoted = { id: context.stanzaId, participant: set(context.participant), text: set(quoted?.conversation) ?? set(quoted?.extendedTextMessage?.text) };
  }
  return rich;
};
