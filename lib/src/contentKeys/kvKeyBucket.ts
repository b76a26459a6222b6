import type { KV, KvEntry } from '@nats-io/kv';
import { BUCKETS, openKvBucket, unlessOvertaken, watchKvBucket, withNats, type NatsHandle } from '../nats';
import { KEY_BYTES, type ContentKey } from './cipher';
import { ContentKeys, type KeyBucket } from './contentKeys';

interface StoredKey {
  kid: string;
  /** base64 of the 32 key bytes. */
  key: string;
}

const parse = (entry: KvEntry | null): ContentKey | null => {
  if (!entry || entry.operation !== 'PUT') return null;
  const stored = entry.json<Partial<StoredKey>>();
  const key = typeof stored.key === 'string' ? Buffer.from(stored.key, 'base64') : null;
  if (typeof stored.kid !== 'string' || key?.length !== KEY_BYTES) throw new Error(`the data key of ${entry.key} is malformed`);
  return { kid: stored.kid, key };
};

/**
 * The data keys in the NATS KV bucket `content_keys` (replicated like every bucket), outside the event log. `create`
 * is compare-and-set (it also takes the place of a destroyed key); destroying is a KV purge: a delete marker that
 * removes every earlier revision of the key from the bucket's stream, so no old revision keeps it.
 */
export class KvKeyBucket implements KeyBucket {
  private constructor(
    private readonly nats: NatsHandle,
    private readonly kv: KV,
    private readonly bucket: string,
  ) {}

  static async open(nats: NatsHandle, bucket: string = BUCKETS.contentKeys): Promise<KvKeyBucket> {
    return new KvKeyBucket(nats, await openKvBucket(nats, bucket), bucket);
  }

  async get(instanceId: string): Promise<ContentKey | null> {
    return parse(await withNats(this.nats, () => this.kv.get(instanceId)));
  }

  async create(instanceId: string, key: ContentKey): Promise<boolean> {
    const value = JSON.stringify({ kid: key.kid, key: key.key.toString('base64') } satisfies StoredKey);
    return (await withNats(this.nats, () => unlessOvertaken(this.kv.create(instanceId, value)))) !== null;
  }

  async destroy(instanceId: string): Promise<string | null> {
    const existing = await this.get(instanceId);
    await withNats(this.nats, () => this.kv.purge(instanceId));
    return existing?.kid ?? null;
  }

  /** Other processes' changes from now on (erasures), through a watch that is opened again when it goes blind. */
  async watch(onChange: (instanceId: string, key: ContentKey | null) => void): Promise<() => void> {
    const watch = await watchKvBucket(this.nats, this.kv, this.bucket, (entry) => onChange(entry.key, parse(entry)), {
      current: false,
      logger: this.nats.logger,
    });
    return () => watch.stop();
  }
}

/** The data keys of a service: the KV bucket, followed for other processes' erasures. */
export const openContentKeys = async (nats: NatsHandle): Promise<ContentKeys> => {
  const keys = new ContentKeys(await KvKeyBucket.open(nats));
  await keys.start();
  return keys;
};
