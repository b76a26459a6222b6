import { newContentKey, type ContentKey } from './cipher';

/**
 * Where the data keys live: a NATS KV bucket in production (`kvKeyBucket.ts`), a map in tests. One key per
 * instance, under the instance id.
 */
export interface KeyBucket {
  get(instanceId: string): Promise<ContentKey | null>;
  /** Compare-and-set: stores `key` only when the instance has none; false when another writer came first. */
  create(instanceId: string, key: ContentKey): Promise<boolean>;
  /** Removes the instance's key and every earlier revision of it; answers the id of the key destroyed, or null. */
  destroy(instanceId: string): Promise<string | null>;
  /** Reports every later change of any instance's key (null: destroyed) until the returned stop is called. */
  watch(onChange: (instanceId: string, key: ContentKey | null) => void): Promise<() => void>;
}

/**
 * Each instance's data key, as the event store's sealing needs it: the current key for new content (created on first
 * use; two writers racing both end up with the one stored first), and, for reading, the key an event names or null
 * when it was destroyed. Keys are cached (one per instance in use: memory grows with instances, not messages); a
 * watch on the bucket drops a key destroyed by another process within moments, and a key id that turned out dead
 * stays dead (ids are random and never reused), so reading an erased history asks the bucket once, not per event.
 */
export class ContentKeys {
  private readonly live = new Map<string, ContentKey>();
  private readonly dead = new Set<string>();
  private readonly loading = new Map<string, Promise<ContentKey | null>>();
  /** Bumped by every change seen for an instance: a load that overlapped one does not fill the cache. */
  private readonly changes = new Map<string, number>();
  private stopWatch: (() => void) | null = null;

  constructor(private readonly bucket: KeyBucket) {}

  /** Follows the bucket's changes (other processes' erasures). */
  async start(): Promise<void> {
    this.stopWatch = await this.bucket.watch((instanceId, key) => this.observe(instanceId, key));
  }

  stop(): void {
    this.stopWatch?.();
  }

  /** The key new content of the instance is sealed with; created on first use. */
  async current(instanceId: string): Promise<ContentKey> {
    const known = this.live.get(instanceId) ?? (await this.load(instanceId));
    if (known) return known;
    const fresh = newContentKey();
    if (await this.bucket.create(instanceId, fresh)) {
      this.remember(instanceId, fresh);
      return fresh;
    }
    const winner = await this.load(instanceId);
    if (!winner) throw new Error(`the data key of ${instanceId} could neither be created nor read`);
    return winner;
  }

  /** Without waiting: the key `kid` when known here, null when known destroyed, undefined when it must be looked up. */
  known(instanceId: string, kid: string): Buffer | null | undefined {
    const live = this.live.get(instanceId);
    if (live?.kid === kid) return live.key;
    return this.dead.has(deadId(instanceId, kid)) ? null : undefined;
  }

  /** The key `kid` of the instance, or null when it was destroyed. */
  async find(instanceId: string, kid: string): Promise<Buffer | null> {
    const known = this.known(instanceId, kid);
    if (known !== undefined) return known;
    const stored = await this.load(instanceId);
    if (stored?.kid === kid) return stored.key;
    // A key an event was sealed with and that the bucket no longer holds was destroyed (keys are never replaced).
    this.dead.add(deadId(instanceId, kid));
    return null;
  }

  /**
   * How many changes of the instance's key this process has seen (creations, erasures here or, through the watch, by
   * other processes). Content read while it stayed the same was readable with the keys as they are now; a reader that
   * holds content it opened earlier (a history scan paused between pages) must not hand it out once it has moved.
   */
  generation(instanceId: string): number {
    return this.changes.get(instanceId) ?? 0;
  }

  /** Destroys the instance's key (erasure); answers whether there was one. */
  async destroy(instanceId: string): Promise<boolean> {
    const kid = await this.bucket.destroy(instanceId);
    this.observe(instanceId, null, kid);
    return kid !== null;
  }

  private observe(instanceId: string, key: ContentKey | null, destroyedKid: string | null = null): void {
    this.changes.set(instanceId, (this.changes.get(instanceId) ?? 0) + 1);
    const previous = this.live.get(instanceId);
    for (const kid of [previous?.kid, destroyedKid]) if (kid && kid !== key?.kid) this.dead.add(deadId(instanceId, kid));
    if (key) this.remember(instanceId, key);
    else this.live.delete(instanceId);
  }

  private remember(instanceId: string, key: ContentKey): void {
    if (!this.dead.has(deadId(instanceId, key.kid))) this.live.set(instanceId, key);
  }

  /** One bucket read per instance at a time; its answer is cached unless a change was seen meanwhile. */
  private load(instanceId: string): Promise<ContentKey | null> {
    const pending = this.loading.get(instanceId);
    if (pending) return pending;
    const before = this.changes.get(instanceId) ?? 0;
    const load = this.bucket
      .get(instanceId)
      .then((key) => {
        if (key && (this.changes.get(instanceId) ?? 0) === before) this.remember(instanceId, key);
        return key;
      })
      .finally(() => this.loading.delete(instanceId));
    this.loading.set(instanceId, load);
    return load;
  }
}

const deadId = (instanceId: string, kid: string): string => `${instanceId} ${kid}`;

/** The bucket in memory: for a single process (the in-memory event store) and for tests. */
export class InMemoryKeyBucket implements KeyBucket {
  private readonly keys = new Map<string, ContentKey>();
  private readonly watchers = new Set<(instanceId: string, key: ContentKey | null) => void>();

  async get(instanceId: string): Promise<ContentKey | null> {
    return this.keys.get(instanceId) ?? null;
  }

  async create(instanceId: string, key: ContentKey): Promise<boolean> {
    if (this.keys.has(instanceId)) return false;
    this.keys.set(instanceId, key);
    this.watchers.forEach((watcher) => watcher(instanceId, key));
    return true;
  }

  async destroy(instanceId: string): Promise<string | null> {
    const key = this.keys.get(instanceId);
    this.keys.delete(instanceId);
    this.watchers.forEach((watcher) => watcher(instanceId, null));
    return key?.kid ?? null;
  }

  async watch(onChange: (instanceId: string, key: ContentKey | null) => void): Promise<() => void> {
    this.watchers.add(onChange);
    return () => this.watchers.delete(onChange);
  }
}
