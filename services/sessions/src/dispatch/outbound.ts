import { vcardDisplayName, type EventStore, type MessageAccepted } from '@wagw/lib';
import { messageRefOf } from '../application/sendContent';
import type { MediaPayload, MessageRef, OutboundMessage } from '../connector/port';

/** How long the account shows "typing…" before a text: grows with the text, bounded. 0 ms per character: never. */
export interface TypingOptions {
  msPerChar: number;
  minMs: number;
  maxMs: number;
}

export const typingMsFor = (text: string, { msPerChar, minMs, maxMs }: TypingOptions): number =>
  msPerChar <= 0 ? 0 : Math.min(maxMs, Math.max(minMs, Math.round([...text].length * msPerChar)));

/** A voice note whose file is not audio: WhatsApp would show a voice message that does not play. */
export class VoiceNoteNotAudio extends Error {
  static readonly reason = 'media_not_audio';
}

const isAudio = (mimetype: string): boolean => mimetype.trim().toLowerCase().startsWith('audio/');

/** A message the send refers to, read from the log (the accept checked that it exists in the same chat). */
const refOrFail = async (events: EventStore, instanceId: string, messageId: string): Promise<MessageRef> => {
  const ref = await messageRefOf(events, instanceId, messageId);
  if (!ref) throw new Error(`message ${messageId} of instance ${instanceId} is not in the log`);
  return ref;
};

/** What the connection is handed for an accepted send (media already fetched). */
export const outboundOf = async (
  events: EventStore,
  instanceId: string,
  accepted: MessageAccepted,
  media: MediaPayload | undefined,
): Promise<OutboundMessage> => {
  const { message_id: messageId, to, type, text, quoted_message_id: quotedId, location, vcard, reaction, voice_note: voiceNote } = accepted.data;
  const quoted = quotedId ? { quoted: await refOrFail(events, instanceId, quotedId) } : {};
  switch (type) {
    case 'location':
      if (!location) break;
      return { messageId, to, location, ...quoted };
    case 'contact':
      if (!vcard) break;
      return { messageId, to, contact: { vcard, displayName: vcardDisplayName(vcard) }, ...quoted };
    case 'reaction':
      if (!reaction?.emoji) break;
      return { messageId, to, reaction: { target: await refOrFail(events, instanceId, reaction.message_id), emoji: reaction.emoji } };
    case 'media':
      if (!media) break;
      if (!voiceNote) return { messageId, to, media, ...quoted };
      if (!isAudio(media.mimetype)) throw new VoiceNoteNotAudio(`voice_note: the file is ${media.mimetype}, not audio`);
      return { messageId, to, media: { ...media, voiceNote: true }, ...quoted };
    case 'text':
      return { messageId, to, text: text ?? '', ...quoted };
  }
  throw new Error(`accepted message ${messageId} of type ${type} lacks its content`);
};
