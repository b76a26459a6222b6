import { InMemoryEventStore, instanceIdFor, messageEvent, type MessageAccepted } from '@wagw/lib';
import { outboundOf, typingMsFor, VoiceNoteNotAudio } from './outbound';

describe('typing time', () => {
  const options = { msPerChar: 40, minMs: 500, maxMs: 4_000 };

  it('grows with the text, between its bounds, counting characters as people see them', () => {
    expect(typingMsFor('ok', options)).toBe(500);
    expect(typingMsFor('x'.repeat(50), options)).toBe(2_000);
    expect(typingMsFor('x'.repeat(5_000), options)).toBe(4_000);
    // One emoji is one character, not two UTF-16 units.
    expect(typingMsFor('😀'.repeat(50), options)).toBe(2_000);
  });

  it('is off at 0 ms per character', () => {
    expect(typingMsFor('x'.repeat(50), { ...options, msPerChar: 0 })).toBe(0);
  });
});

describe('a voice note handed to the connection', () => {
  const ID = instanceIdFor('acme', 'voice');
  const accepted = messageEvent<MessageAccepted>('MessageAccepted', '2026-11-28T08:00:00.000Z', {
    message_id: 'm_0123456789abcdef01234567',
    to: '4917612345678',
    type: 'media',
    text: null,
    media_url: 'https://files.example/hello.ogg',
    filename: null,
    voice_note: true,
  });
  const file = (mimetype: string) => ({ data: Buffer.alloc(8), mimetype, filename: 'hello.ogg' });

  it('is the audio marked as a voice note', async () => {
    const outbound = await outboundOf(new InMemoryEventStore(), ID, accepted, file('audio/ogg'));
    expect(outbound.media).toMatchObject({ mimetype: 'audio/ogg', voiceNote: true });
  });

  it('is refused when the file is not audio, with the reason the send fails with', async () => {
    await expect(outboundOf(new InMemoryEventStore(), ID, accepted, file('image/png'))).rejects.toBeInstanceOf(VoiceNoteNotAudio);
    expect(VoiceNoteNotAudio.reason).toBe('media_not_audio');
  });

  it('leaves a plain media send as it is', async () => {
    const plain = { ...accepted, data: { ...accepted.data, voice_note: undefined } } as MessageAccepted;
    expect((await outboundOf(new InMemoryEventStore(), ID, plain, file('image/png'))).media).not.toHaveProperty('voiceNote');
  });
});
