import { proto } from '@whiskeysockets/baileys';
import { SentMessageStore } from './sentStore';
import { MemoryTextBucket } from './textBucket';

describe('SentMessageStore', () => {
  it("drops the content of an erased instance's sent messages and keeps their ids for receipts; other instances keep theirs", async () => {
    const sent = new SentMessageStore(new MemoryTextBucket());
    const message = proto.Message.create({ conversation: 'a text to erase' });
    await sent.put('INSTANCEA', 'WA1', { messageId: 'm1', message });
    await sent.put('INSTANCEA', 'WA2', { messageId: 'm2', message: null });
    await sent.put('INSTANCEB', 'WA3', { messageId: 'm3', message });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const erasedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await sent.put('INSTANCEA', 'WA4', { messageId: 'm4', message: proto.Message.create({ conversation: 'sent after the erasure' }) });
    await sent.forgetContent('INSTANCEA', erasedAt);
    expect(await sent.get('INSTANCEA', 'WA1')).toEqual({ messageId: 'm1', message: null });
    expect(await sent.get('INSTANCEA', 'WA2')).toEqual({ messageId: 'm2', message: null });
    expect((await sent.get('INSTANCEB', 'WA3'))?.message?.conversation).toBe('a text to erase');
    // Sent after the erasure (an erasure replayed at a later start-up must not reach it).
    expect((await sent.get('INSTANCEA', 'WA4'))?.message?.conversation).toBe('sent after the erasure');
  });
});
