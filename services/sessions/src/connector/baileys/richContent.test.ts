import { keyOf, richContentOf, sendOptionsOf } from './richContent';
import { waMessageIdFor } from './waMessages';

describe('rich content for Baileys', () => {
  const received = { fromMe: false, id: '3EB0AAAA', chat: '120363025246125486@g.us', participant: '4917612345678', text: 'See you' };
  const ours = { fromMe: true, id: 'm_1', chat: '4917612345678', participant: null, text: 'Hi' };

  it('keys our messages by the WhatsApp id we gave them, and received ones by theirs, with the group participant', () => {
    expect(keyOf(ours)).toEqual({ remoteJid: '4917612345678@s.whatsapp.net', fromMe: true, id: waMessageIdFor('m_1') });
    expect(keyOf(received)).toEqual({
      remoteJid: '120363025246125486@g.us',
      fromMe: false,
      id: '3EB0AAAA',
      participant: '4917612345678@s.whatsapp.net',
    });
  });

  it('maps locations, contact cards and reactions onto Baileys content shapes', () => {
    expect(richContentOf({ messageId: 'm', to: '1', location: { latitude: 1.5, longitude: -2, name: 'Here' } })).toEqual({
      location: { degreesLatitude: 1.5, degreesLongitude: -2, name: 'Here' },
    });
    expect(richContentOf({ messageId: 'm', to: '1', location: { latitude: 0, longitude: 0, name: null } })).toEqual({
      location: { degreesLatitude: 0, degreesLongitude: 0 },
    });
    expect(richContentOf({ messageId: 'm', to: '1', contact: { vcard: 'BEGIN:VCARD…', displayName: 'Jane' } })).toEqual({
      contacts: { displayName: 'Jane', contacts: [{ displayName: 'Jane', vcard: 'BEGIN:VCARD…' }] },
    });
    expect(richContentOf({ messageId: 'm', to: '1', reaction: { target: received, emoji: '👍' } })).toEqual({ react: { text: '👍', key: keyOf(received) } });
    expect(richContentOf({ messageId: 'm', to: '1', text: 'plain' })).toBeNull();
  });

  it('quotes the replied-to message with its key and text', () => {
    expect(sendOptionsOf({ messageId: 'm', to: '1', text: 'Yes', quoted: ours }, 'W1')).toEqual({
      messageId: 'W1',
      quoted: { key: keyOf(ours), message: { conversation: 'Hi' } },
    });
    expect(sendOptionsOf({ messageId: 'm', to: '1', text: 'Yes' }, 'W1')).toEqual({ messageId: 'W1' });
  });
});
