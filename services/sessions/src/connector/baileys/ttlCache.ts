import type { CacheStore } from '@whiskeysockets/baileys';

/**
 * A Baileys `CacheStore` in a map: entries expire when read after their TTL, the oldest go beyond `maxEntries`.
 * No timer, unlike the NodeCache Baileys makes for every socket when none is given (one 600 s interval each, never
 * cleared: a leak per reconnect).
 */
export class TtlCache implements CacheStore {
  private readonly entries = new Map<string, { value: unknown; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get<T>(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    // CacheStore is generic in what it returns; callers get back what they stored under the key.
    return entry.value as T;
  }

  set<T>(key: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  del(key: string): void {
    this.entries.delete(key);
  }

  flushAll(): void {
    this.entries.clear();
  }
}
