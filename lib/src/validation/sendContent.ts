import { invalidArgument } from '../errors';
import { exceedsCharacters, MESSAGE_ID } from './rules';

/**
 * The rules of the richer send fields (`send` and `send_group`): locations, contact cards, reactions and group
 * ids. The gateway's schemas describe them; the sessions service enforces them with these (one place, clear codes).
 */
export const SEND_CONTENT_LIMITS = {
  /** A contact card (vCard 3.0 text), bytes in UTF-8: cards with photos are what make them large. */
  vcardBytes: 8_192,
  /** A location's name, characters. */
  locationName: 256,
  /** A message id given to quote or react to (our ids and inbound ids are 26-34 characters). */
  messageId: 64,
  /** An emoji, UTF-16 units: the longest ZWJ sequences (families, flags of regions) stay below 32. */
  emoji: 32,
} as const;

/** The message types `send` takes. */
export const SEND_TYPES = ['text', 'media', 'location', 'contact', 'reaction'] as const;
export type SendType = (typeof SEND_TYPES)[number];
export const isSendType = (value: string): value is SendType => (SEND_TYPES as readonly string[]).includes(value);

/** A WhatsApp group id: `<creator digits>-<timestamp digits>@g.us` (older groups) or `<digits>@g.us`. */
export const GROUP_ID_PATTERN = '^[0-9]{5,20}(-[0-9]{5,20})?@g\\.us$';
const groupId = new RegExp(GROUP_ID_PATTERN);
export const isGroupId = (value: string): boolean => groupId.test(value);

export const assertGroupId = (value: string): void => {
  if (!isGroupId(value)) throw invalidArgument('invalid_group_id', 'group_id must look like 120363025246125486@g.us or 4915112345678-1600000000@g.us');
};

/** A 400 unless `value` has the form of a message id of an instance's history (also a stream token). */
export const assertMessageId = (value: string, field: string): void => {
  if (!MESSAGE_ID.test(value)) throw invalidArgument('invalid_message_id', `${field} must be a message_id of this instance (m_… or in_…)`);
};

export interface Location {
  latitude: number;
  longitude: number;
  name: string | null;
}

const inRange = (value: number, bound: number): boolean => Number.isFinite(value) && value >= -bound && value <= bound;

/** A location to send: latitude -90..90, longitude -180..180 (degrees, WGS 84), an optional name. */
export const assertLocation = ({ latitude, longitude, name }: Location): void => {
  if (!inRange(latitude, 90)) throw invalidArgument('invalid_latitude', 'latitude must be a number from -90 to 90');
  if (!inRange(longitude, 180)) throw invalidArgument('invalid_longitude', 'longitude must be a number from -180 to 180');
  if (name !== null && exceedsCharacters(name, SEND_CONTENT_LIMITS.locationName)) {
    throw invalidArgument('invalid_location_name', `name must be at most ${SEND_CONTENT_LIMITS.locationName} characters`);
  }
};

/** A contact card within the size cap (bytes in UTF-8); the gateway checks it before its schema too (vcard_too_large). */
export const assertVcardSize = (vcard: string): void => {
  if (Buffer.byteLength(vcard, 'utf8') > SEND_CONTENT_LIMITS.vcardBytes) {
    throw invalidArgument('vcard_too_large', `vcard must be at most ${SEND_CONTENT_LIMITS.vcardBytes} bytes`);
  }
};

/** A contact card: a vCard (BEGIN:VCARD … END:VCARD) within the size cap. */
export const assertVcard = (vcard: string): void => {
  if (vcard.trim() === '') throw invalidArgument('missing_vcard', 'vcard is required for type contact');
  assertVcardSize(vcard);
  if (!/^BEGIN:VCARD\r?\n[\s\S]*\r?\nEND:VCARD\s*$/i.test(vcard.trim())) {
    throw invalidArgument('invalid_vcard', 'vcard must be a vCard: BEGIN:VCARD, its lines, END:VCARD');
  }
};

/** The name a contact card shows in the chat: its FN line, else its N line, else 'Contact'. */
export const vcardDisplayName = (vcard: string): string => {
  const line = (key: string): string | undefined => vcard.match(new RegExp(`^${key}(?:;[^:\\r\\n]*)?:(.*)$`, 'im'))?.[1]?.trim();
  return line('FN') || line('N')?.split(';').filter(Boolean).reverse().join(' ') || 'Contact';
};

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** A keycap: a digit, # or * under U+20E3 (1️⃣, also without its U+FE0F); a letter under it (a⃣) is none. */
const KEYCAP = /^[0-9#*]\uFE0F?\u20E3$/u;
/** A flag of a region: two regional indicators (🇩🇪); one alone shows as a boxed letter. */
const FLAG = /^\p{Regional_Indicator}{2}$/u;
const REGIONAL = /\p{Regional_Indicator}/u;
/** Emoji code points, with their modifiers and ZWJ sequences around them (❤ without U+FE0F too, as people type it). */
const PICTOGRAPH = /\p{Extended_Pictographic}|\p{Emoji_Presentation}/u;

const isEmojiGrapheme = (value: string): boolean => KEYCAP.test(value) || FLAG.test(value) || (!REGIONAL.test(value) && PICTOGRAPH.test(value));

/** Whether `value` is one emoji as a person sees it: one grapheme (👍🏽 and 👨‍👩‍👧 are one each) that is an emoji. */
export const isSingleEmoji = (value: string): boolean =>
  value.length <= SEND_CONTENT_LIMITS.emoji && Array.from(graphemes.segment(value)).length === 1 && isEmojiGrapheme(value);

export const assertEmoji = (emoji: string): void => {
  if (!isSingleEmoji(emoji)) throw invalidArgument('invalid_emoji', 'emoji must be exactly one emoji (one grapheme, e.g. 👍 or 👍🏽)');
};
