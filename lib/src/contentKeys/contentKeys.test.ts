import type { ContentKey } from './cipher';
import { ContentKeys, InMemoryKeyBucket, type KeyBucket } from './contentKeys';

/** A bucket whose reads and writes wait for the test to let them go, to line races up. */
class SlowBucket implements KeyBucket {
  readonly gates: Array<() => void> = [];
  constructor(readonly inner: InMemoryKeyBucket) {}
  private gate<T>(operation: () => Promise<T>): Promise<T> {
    return new Promise<void>((resolve) => this.gates.push(resolve)).then(operation);
  }
  get(id: string): Promise<ContentKey | null> {
    return this.gate(() => this.inner.get(id));
  }
  create(id: string, key: ContentKey): Promise<boolean> {
    return this.gate(() => this.inner.create(id, key));
  }
  destroy(id: string): Promise<string | null> {
    return this.inner.destroy(id);
  }
  watch(onChange: (id: string, key: ContentKey | null) => void): Promise<() => void> {
    return this.inner.watch(onChange);
  }
  /** Lets every waiting operation go, until none waits (bounded). */
  async release(): Promise<void> {
    for (let round = 0; round < 20 && this.gates.length > 0; round++) {
      this.gates.splice(0).forEach((go) => go());
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

describe('ContentKeys', () => {
  it('creates one key per instance on first use, and caches it', async () => {
    const bucket = new InMemoryKeyBucket();
    const get = jest.spyOn(bucket, 'get');
    const keys = new ContentKeys(bucket);
    const first = await keys.current('I1');
    expect(await keys.current('I1')).toBe(first);
    expect(get).toHaveBeenCalledTimes(1);
    expect((await keys.current('I2')).kid).not.toBe(first.kid);
    expect(keys.known('I1', first.kid)?.equals(first.key)).toBe(true);
  });

  it('two processes racing to create the first key both end up with the one stored first', async () => {
    const shared = new InMemoryKeyBucket();
    const [slowA, slowB] = [new SlowBucket(shared), new SlowBucket(shared)];
    const [a, b] = [new ContentKeys(slowA), new ContentKeys(slowB)];
    // Both read "no key" before either creates one; then both try to create.
    const both = Promise.all([a.current('I1'), b.current('I1')]);
    await Promise.all([slowA.release(), slowB.release()]);
    const [keyA, keyB] = await both;
    expect(keyA.kid).toBe(keyB.kid);
    expect((await shared.get('I1'))?.kid).toBe(keyA.kid);
  });

  it('after a destroy, the old key reads as destroyed here and, through the watch, in another process; a new key differs', async () => {
    const shared = new InMemoryKeyBucket();
    const [here, there] = [new ContentKeys(shared), new ContentKeys(shared)];
    await there.start();
    const old = await here.current('I1');
    expect((await there.find('I1', old.kid))?.equals(old.key)).toBe(true);
    expect(await here.destroy('I1')).toBe(true);
    expect(here.known('I1', old.kid)).toBeNull();
    expect(there.known('I1', old.kid)).toBeNull();
    const fresh = await here.current('I1');
    expect(fresh.kid).not.toBe(old.kid);
    expect(await there.find('I1', old.kid)).toBeNull();
    expect((await there.find('I1', fresh.kid))?.equals(fresh.key)).toBe(true);
    there.stop();
  });

  it('learns of a destroy it did not watch when an event names a key the bucket no longer holds, and asks only once', async () => {
    const shared = new InMemoryKeyBucket();
    const writer = new ContentKeys(shared);
    const old = await writer.current('I1');
    const reader = new ContentKeys(shared);
    expect((await reader.find('I1', old.kid))?.equals(old.key)).toBe(true);
    await new ContentKeys(shared).destroy('I1');
    const get = jest.spyOn(shared, 'get');
    // Unwatched, the reader still holds the key; a key id it does not know makes it ask the bucket.
    expect(await reader.find('I1', 'an-unknown-kid')).toBeNull();
    expect(await reader.find('I1', 'an-unknown-kid')).toBeNull();
    expect(get).toHaveBeenCalledTimes(1);
  });

  it('destroying an instance without a key answers false', async () => {
    expect(await new ContentKeys(new InMemoryKeyBucket()).destroy('I9')).toBe(false);
  });

  it('does not cache a key read while a destroy was seen (a load that overlapped a change)', async () => {
    const shared = new InMemoryKeyBucket();
    const old = await new ContentKeys(shared).current('I1');
    const slow = new SlowBucket(shared);
    const reader = new ContentKeys(slow);
    await reader.start();
    const pending = reader.find('I1', old.kid);
    await shared.destroy('I1');
    await slow.release();
    expect(await pending).toBeNull();
    expect(reader.known('I1', old.kid)).toBeNull();
    reader.stop();
  });

  it("moves an instance's generation on every key change it sees, its own destroy or another process's through the watch", async () => {
    const shared = new InMemoryKeyBucket();
    const [here, there] = [new ContentKeys(shared), new ContentKeys(shared)];
    await there.start();
    await here.current('I1');
    const before = there.generation('I1');
    await here.destroy('I1');
    expect(here.generation('I1')).toBeGreaterThan(0);
    expect(there.generation('I1')).toBeGreaterThan(before);
    expect(there.generation('I2')).toBe(0);
    there.stop();
  });
});
