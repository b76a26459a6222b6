import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { InboundRefStore } from './inboundRefs';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

describe('InboundRefStore', () => {
  it("forgets the instance's refs stored before the erasure or reset, keeps the ones received since and other instances'", async () => {
    const refs = new InboundRefStore(new MemoryTextBucket());
    await refs.put('INSTANCEA', 'in_old', 'ref-old');
    await refs.put('INSTANCEB', 'in_other', 'ref-other');
    await tick();
    const erasedAt = Date.now();
    await tick();
    await refs.put('INSTANCEA', 'in_new', 'ref-new');
    await refs.forgetInstance('INSTANCEA', erasedAt);
    expect(await refs.get('INSTANCEA', 'in_old')).toBeNull();
    // Received after it: an erasure replayed at a later start-up must not take it.
    expect(await refs.get('INSTANCEA', 'in_new')).toBe('ref-new');
    expect(await refs.get('INSTANCEB', 'in_other')).toBe('ref-other');
  });
});
