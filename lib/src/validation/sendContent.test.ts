import { assertLocation, assertVcard, isGroupId, isSingleEmoji, vcardDisplayName } from './sendContent';

const codeOf = (run: () => void): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
};

describe('send content rules', () => {
  it('takes one emoji as one grapheme, including modifiers and ZWJ sequences', () => {
    for (const emoji of ['👍', '👍🏽', '👨‍👩‍👧', '❤️', '🇩🇪', '1️⃣']) expect(isSingleEmoji(emoji)).toBe(true);
    for (const other of ['', 'a', '👍👍', 'ok', '👍 ', '1']) expect(isSingleEmoji(other)).toBe(false);
  });

  it('takes keycaps of digits, # and * and flags of two regional indicators, nothing that only looks close', () => {
    for (const emoji of ['1⃣', '#️⃣', '*⃣', '🇺🇸', '🏴󠁧󠁢󠁥󠁮󠁧󠁿', '❤']) expect(isSingleEmoji(emoji)).toBe(true);
    // A letter under a keycap, a lone regional indicator (a boxed letter), a keycap mark alone.
    for (const other of ['a⃣', 'A⃣', '🇦', '\u20e3']) expect(isSingleEmoji(other)).toBe(false);
  });

  it('bounds coordinates and names each fault', () => {
    expect(codeOf(() => assertLocation({ latitude: 52.52, longitude: 13.405, name: null }))).toBeUndefined();
    expect(codeOf(() => assertLocation({ latitude: -90, longitude: 180, name: 'Pole' }))).toBeUndefined();
    expect(codeOf(() => assertLocation({ latitude: 90.0001, longitude: 0, name: null }))).toBe('invalid_latitude');
    expect(codeOf(() => assertLocation({ latitude: Number.NaN, longitude: 0, name: null }))).toBe('invalid_latitude');
    expect(codeOf(() => assertLocation({ latitude: 0, longitude: -180.5, name: null }))).toBe('invalid_longitude');
    expect(codeOf(() => assertLocation({ latitude: 0, longitude: 0, name: 'x'.repeat(257) }))).toBe('invalid_location_name');
    // Characters as the JSON schema counts them: 256 emoji are 256, not 512.
    expect(codeOf(() => assertLocation({ latitude: 0, longitude: 0, name: '😀'.repeat(256) }))).toBeUndefined();
    expect(codeOf(() => assertLocation({ latitude: 0, longitude: 0, name: '😀'.repeat(257) }))).toBe('invalid_location_name');
  });

  it('takes a vCard under its cap, with its display name', () => {
    const card = 'BEGIN:VCARD\nVERSION:3.0\nN:Doe;Jane;;;\nFN:Jane Doe\nTEL;type=CELL;waid=4915112345678:+49 151 12345678\nEND:VCARD';
    expect(codeOf(() => assertVcard(card))).toBeUndefined();
    expect(vcardDisplayName(card)).toBe('Jane Doe');
    expect(vcardDisplayName('BEGIN:VCARD\nN:Doe;Jane\nEND:VCARD')).toBe('Jane Doe');
    expect(codeOf(() => assertVcard(''))).toBe('missing_vcard');
    expect(codeOf(() => assertVcard('hello'))).toBe('invalid_vcard');
    expect(codeOf(() => assertVcard(`BEGIN:VCARD\nNOTE:${'x'.repeat(8_200)}\nEND:VCARD`))).toBe('vcard_too_large');
  });

  it('knows both forms of group id', () => {
    expect(isGroupId('120363025246125486@g.us')).toBe(true);
    expect(isGroupId('4915112345678-1600000000@g.us')).toBe(true);
    for (const bad of ['4915112345678@s.whatsapp.net', '4915112345678', 'abc@g.us', '1-2@g.us', '120363025246125486@g.us.evil'])
      expect(isGroupId(bad)).toBe(false);
  });
});
