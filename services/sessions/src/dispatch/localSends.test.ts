import { LocalSends } from './localSends';

describe('LocalSends', () => {
  const queued = () => true;

  it('hands a send out again when its receipt has not come confirmWithinMs after the platform took it, at most 5 times', () => {
    const local = new LocalSends(1_000);
    const handedOut: string[] = [];
    for (let round = 0; round < 7; round++) {
      expect(local.take('s')).toBe(true);
      local.release('s', true, true, round * 2_000);
      const { again, leftAlone } = local.prune(queued, round * 2_000 + 1_000);
      handedOut.push(again.length ? 'again' : leftAlone.length ? 'left alone' : 'kept');
      if (leftAlone.length) break;
    }
    expect(handedOut).toEqual(['again', 'again', 'again', 'again', 'again', 'left alone']);
    expect(local.take('s')).toBe(false);
  });

  it('never hands out again a send that failed here (recorded already), however long its record takes to show', () => {
    const local = new LocalSends(1_000);
    local.take('s');
    local.release('s', true, false, 0);
    expect(local.prune(queued, 3_600_000)).toEqual({ again: [], leftAlone: [] });
    expect(local.busy('s')).toBe(true);
    // Once the ledger no longer lists it, it is forgotten.
    local.prune(() => false, 3_600_000);
    expect(local.busy('s')).toBe(false);
  });
});
