import { eventSummary } from '../console/src/eventSummary';

describe("the console timeline's line for an event", () => {
  it('names a media send by its URL and file name', () => {
    const line = eventSummary({ message_id: 'm_1', to: '4915112345678', type: 'media', text: null, media_url: 'https://example.com/a.pdf', filename: 'a.pdf' });
    expect(line).toBe('to: 4915112345678 · type: media · media_url: https://example.com/a.pdf · filename: a.pdf · message_id: m_1');
  });

  it('says that a received message carried a file: its type, name and size', () => {
    const line = eventSummary({
      message_id: 'in_1',
      from: '4915199999999',
      push_name: 'Ana',
      text: 'doc here',
      media: { mimetype: 'application/pdf', filename: 'offer.pdf', size: 1200 },
    });
    expect(line).toBe('from: 4915199999999 · push_name: Ana · text: doc here · media: application/pdf, offer.pdf, 1200 bytes · message_id: in_1');
  });

  it('shows a location, a contact card by its name, a reaction and a reply in words', () => {
    expect(eventSummary({ type: 'location', location: { latitude: 52.5, longitude: 13.4, name: 'Brandenburger Tor' } })).toBe(
      'type: location · location: 52.5, 13.4 (Brandenburger Tor)',
    );
    expect(eventSummary({ type: 'contact', vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Jane Doe\nTEL:+4915112345678\nEND:VCARD' })).toBe(
      'type: contact · vcard: Jane Doe',
    );
    expect(eventSummary({ type: 'contact', vcard: 'BEGIN:VCARD\nVERSION:3.0\nEND:VCARD' })).toBe('type: contact · vcard: a contact card');
    expect(eventSummary({ type: 'reaction', reaction: { message_id: 'in_7', emoji: '👍' } })).toBe('type: reaction · reaction: 👍 on in_7');
    expect(eventSummary({ type: 'reaction', reaction: { message_id: 'in_7', emoji: null } })).toBe('type: reaction · reaction: removed on in_7');
    expect(eventSummary({ type: 'text', text: 'yes', quoted_message_id: 'in_3' })).toBe('type: text · text: yes · quoted_message_id: in_3');
  });

  it('leaves out what is empty, and shows anything else as text (no markup is read)', () => {
    expect(eventSummary({ text: '', reason: null, number: undefined, from: '<img src=x onerror=alert(1)>' })).toBe('from: <img src=x onerror=alert(1)>');
    expect(eventSummary({ reason: 'media_unavailable: HTTP 404', voice_note: true })).toBe('voice_note: true · reason: media_unavailable: HTTP 404');
  });
});
