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

/** Baileys' default TTLs (DEFAULT_CACHE_TTLS, seconds there). */
const MINUTES_5 = 5 * 60_000;
const HOUR = 60 * 60_000;

/** The caches of one instance, made once and given to each of its sockets (baileys.md §0.7). */
export interface InstanceCaches {
  readonly msgRetryCounter: TtlCache;
  readonly userDevices: TtlCache;
  readonly callOffer: TtlCache;
  readonly placeholderResend: TtlCache;
  /** makeCacheableSignalKeyStore's cache over the stored Signal keys. */
  readonly signalKeys: TtlCache;
  /** WhatsApp id -> our message id, for the receipts of recent sends (the sent store has them all). */
  readonly sentIds: TtlCache;
}

export const newInstanceCaches = (): InstanceCaches => ({
  msgRetryCounter: new TtlCache(HOUR),
  userDevices: new TtlCache(MINUTES_5),
  callOffer: new TtlCache(MINUTES_5),
  placeholderResend: new TtlCache(HOUR),
  signalKeys: new TtlCache(MINUTES_5, 50_000),
  sentIds: new TtlCache(24 * HOUR),
});
