/** The fields of a history event a person reads in the timeline, in this order. */
const SHOWN = [
  'from',
  'push_name',
  'group_id',
  'to',
  'type',
  'text',
  'caption',
  'media_url',
  'filename',
  'media',
  'voice_note',
  'location',
  'vcard',
  'reaction',
  'quoted_message_id',
  'reason',
  'number',
  'message_id',
  'url',
] as const;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One field as text: a received file, a location, a contact card and a reaction in words, anything else as it is. */
const valueText = (key: string, value: unknown): string => {
  if (typeof value === 'string') {
    // A card is many lines: its name says which contact it is.
    if (key === 'vcard') return /^FN[^:\r\n]*:(.*)$/im.exec(value)?.[1]?.trim() || 'a contact card';
    return value;
  }
  if (!isRecord(value)) return JSON.stringify(value);
  if (key === 'media') return [value.mimetype, value.filename, typeof value.size === 'number' ? `${value.size} bytes` : null].filter(Boolean).join(', ');
  if (key === 'location')
    return `${String(value.latitude)}, ${String(value.longitude)}${typeof value.name === 'string' && value.name ? ` (${value.name})` : ''}`;
  if (key === 'reaction') return `${typeof value.emoji === 'string' && value.emoji ? value.emoji : 'removed'} on ${String(value.message_id)}`;
  return JSON.stringify(value);
};

/** What a person wants to see of an event's data, as "key: value · key: value"; every value is shown as text. */
export const eventSummary = (data: Record<string, unknown>): string => {
  const parts: string[] = [];
  for (const key of SHOWN) {
    const value = data[key];
    if (value !== undefined && value !== null && value !== '') parts.push(`${key}: ${valueText(key, value)}`);
  }
  return parts.join(' · ');
};
