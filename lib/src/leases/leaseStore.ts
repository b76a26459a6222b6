import type { KV, KvEntry } from '@nats-io/kv';
import { openKvBucket, unlessOvertaken, watchKvBucket, withNats, type NatsHandle } from '../nats';

/** Who holds an lease, and until when (the holder's clock, ms since the epoch). */
export interface LeaseHolder {
  owner: string;
  until: number;
}

/** A lease as last seen in the bucket; `revision` is what a compare-and-set takes. */
export interface LeaseRecord extends LeaseHolder {
  key: string;
  revision: number;
}

const parse = (entry: KvEntry): LeaseRecord | null => {
  if (entry.operation !== 'PUT') return null;
  try {
    const holder = entry.json<LeaseHolder>();
    if (typeof holder.owner !== 'string' || typeof holder.until !== 'number') return null;
    return { key: entry.key, owner: holder.owner, until: holder.until, revision: entry.revision };
  } catch {
    return null;
  }
};

/**
 * Leases in a NATS KV bucket, one key per leased thing (an instance, a role): taking one is `create` (or a
 * compare-and-set over an expired or released one), renewing is `update` at the revision last written. A lease
 * carries its expiry, so a replica that died is replaced once `until` has passed, whatever the server's own expiry
 * timers do. Replicas are assumed to have clocks within a second of each other (NTP).
 */
export class LeaseStore {
  private constructor(
    private readonly nats: NatsHandle,
    readonly kv: KV,
    private readonly bucket: string,
  ) {}

  static async open(nats: NatsHandle, bucket: string): Promise<LeaseStore> {
    return new LeaseStore(nats, await openKvBucket(nats, bucket), bucket);
  }

  async read(key: string): Promise<LeaseRecord | null> {
    const entry = await withNats(this.nats, () => this.kv.get(key));
    return entry ? parse(entry) : null;
  }

  /**
   * Takes the lease when nobody holds it, it has expired, or `owner` already holds it. Answers the new revision,
   * or null when another live replica holds it (or won a race for it).
   */
  async tryAcquire(key: string, owner: string, ttlMs: number, now = Date.now()): Promise<number | null> {
    const entry = await withNats(this.nats, () => this.kv.get(key));
    const value = JSON.stringify({ owner, until: now + ttlMs } satisfies LeaseHolder);
    const current = entry ? parse(entry) : null;
    if (current && current.owner !== owner && current.until > now) return null;
    return withNats(this.nats, () => unlessOvertaken(entry ? this.kv.update(key, value, entry.revision) : this.kv.create(key, value)));
  }

  /** Extends a held lease; null when it is no longer ours (someone took it over). */
  async renew(key: string, owner: string, revision: number, ttlMs: number, now = Date.now()): Promise<number | null> {
    const value = JSON.stringify({ owner, until: now + ttlMs } satisfies LeaseHolder);
    return withNats(this.nats, () => unlessOvertaken(this.kv.update(key, value, revision)));
  }

  /** Gives a held lease up at once, so another replica can take it without waiting for the expiry. */
  async release(key: string, revision: number): Promise<void> {
    await withNats(this.nats, () => unlessOvertaken(this.kv.delete(key, { previousSeq: revision })));
  }

  /**
   * Every change to any lease, starting with the current state of each (deleted leases come as null); a watch whose
   * consumer went away with a NATS node is opened again (`watchKvBucket`).
   */
  async watch(onChange: (key: string, lease: LeaseRecord | null) => void): Promise<() => void> {
    const watch = await watchKvBucket(this.nats, this.kv, this.bucket, (entry) => onChange(entry.key, parse(entry)), { logger: this.nats.logger });
    return () => watch.stop();
  }
}
