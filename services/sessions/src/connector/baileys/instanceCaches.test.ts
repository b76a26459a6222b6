import { TtlCache } from './ttlCache';

describe('the TTL cache given to Baileys', () => {
  it('forgets entries after their TTL', () => {
    let now = 1_000;
    const cache = new TtlCache(100, 10, () => now);
    cache.set('a', 1);
    now += 99;
    expect(cache.get<number>('a')).toBe(1);
    now += 1;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops the oldest entries beyond its size, and deletes and flushes on demand', () => {
    const cache = new TtlCache(60_000, 2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 3); // written again: now the newest
    cache.set('c', 4);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([3, undefined, 4]);
    cache.del('a');
    expect(cache.get('a')).toBeUndefined();
    cache.flushAll();
    expect(cache.size).toBe(0);
  });
});
