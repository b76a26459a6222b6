import type { KV } from '@nats-io/kv';
import { openKvBucket, withNats, type KvBucketOptions, type NatsHandle } from '@wagw/lib';

/**
 * The little the Baileys stores need from a key-value bucket: text values under NATS KV keys. The NATS KV bucket
 * in production; a map in unit tests.
 */
export interface TextBucket {
  /** The value, or null when the key is missing or deleted. */
  get(key: string): Promise<string | null>;
  put(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** Every live key starting with `<prefix>.`; with `writtenBefore` (ms since the epoch), only those written before it. */
  keysUnder(prefix: string, writtenBefore?: number): Promise<string[]>;
}

/** A NATS KV bucket; every operation fails fast (`unavailable`) while NATS is unreachable. */
export class NatsTextBucket implements TextBucket {
  constructor(
    private readonly nats: NatsHandle,
    private readonly kv: KV,
  ) {}

  /** Opens the bucket, creating it when missing. */
  static async open(nats: NatsHandle, name: string, options: KvBucketOptions = {}): Promise<NatsTextBucket> {
    return new NatsTextBucket(nats, await openKvBucket(nats, name, options));
  }

  async get(key: string): Promise<string | null> {
    const entry = await withNats(this.nats, () => this.kv.get(key));
    return entry?.operation === 'PUT' ? entry.string() : null;
  }

  async put(key: string, value: string): Promise<void> {
    await withNats(this.nats, () => this.kv.put(key, value));
  }

  async delete(key: string): Promise<void> {
    await withNats(this.nats, () => this.kv.delete(key));
  }

  async keysUnder(prefix: string, writtenBefore?: number): Promise<string[]> {
    return withNats(this.nats, async () => {
      const keys: string[] = [];
      for await (const key of await this.kv.keys(`${prefix}.>`)) keys.push(key);
      if (writtenBefore === undefined) return keys;
      const written = await Promise.all(keys.map(async (key) => (await this.kv.get(key))?.created.getTime() ?? Infinity));
      return keys.filter((_, i) => written[i]! < writtenBefore);
    });
  }
}

/** A bucket in memory (one process, no expiry). */
export class MemoryTextBucket implements TextBucket {
  readonly entries = new Map<string, string>();
  private readonly written = new Map<string, number>();

  async get(key: string): Promise<string | null> {
    return this.entries.get(key) ?? null;
  }

  async put(key: string, value: string): Promise<void> {
    this.entries.set(key, value);
    this.written.set(key, Date.now());
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
    this.written.delete(key);
  }

  async keysUnder(prefix: string, writtenBefore?: number): Promise<string[]> {
    return [...this.entries.keys()].filter(
      (key) => key.startsWith(`${prefix}.`) && (writtenBefore === undefined || (this.written.get(key) ?? Infinity) < writtenBefore),
    );
  }
}

const TOKEN = /^[A-Za-z0-9_-]+$/;

/** A key token for a value chosen by us (instance ids, type names); they must already be safe. */
export const token = (value: string, what: string): string => {
  if (!TOKEN.test(value)) throw new Error(`${what} '${value}' cannot name a KV key: only letters, digits, '-' and '_'`);
  return value;
};

/** A key token for an id chosen elsewhere (WhatsApp ids contain '@', ':', '+', '/', '='). */
export const encodedToken = (id: string): string => {
  if (id === '') throw new Error('An empty id cannot name a KV key');
  return Buffer.from(id, 'utf8').toString('base64url');
};
