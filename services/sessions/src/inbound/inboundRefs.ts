import { BUCKETS, type NatsHandle } from '@wagw/lib';
import { NatsTextBucket, token, type TextBucket } from '../connector/baileys/textBucket';

/** How long a received message can still be marked read or have its media fetched (WhatsApp's files go within weeks). */
export const INBOUND_REF_TTL_MS = 30 * 24 * 3_600_000;

/**
 * What the connector needs to act on a received message later (mark_read, media), under our message id, in a NATS
 * KV bucket whose entries expire. Kept out of the event log: a Baileys ref holds the file's media key, and the log
 * is exported, replayed and shown in history. Any replica reads it (media is fetched wherever the request lands).
 */
export class InboundRefStore {
  constructor(private readonly bucket: TextBucket) {}

  static async open(nats: NatsHandle, ttlMs = INBOUND_REF_TTL_MS): Promise<InboundRefStore> {
    return new InboundRefStore(await NatsTextBucket.open(nats, BUCKETS.inboundRefs, { ttlMs }));
  }

  put(instanceId: string, messageId: string, ref: string): Promise<void> {
    return this.bucket.put(keyOf(instanceId, messageId), ref);
  }

  /**
   * Drops the instance's refs stored before `before` (ms since the epoch): after an erasure its received media must
   * not be fetchable any more, and after a reset its old link's messages are not its own. Refs of messages received
   * since stay: an erasure or reset replayed at a later start-up must not take them. Idempotent; every replica may do it.
   */
  async forgetInstance(instanceId: string, before: number): Promise<void> {
    for (const key of await this.bucket.keysUnder(token(instanceId, 'instance id'), before)) await this.bucket.delete(key);
  }

  /** The ref, or null for a message this instance did not receive (or received too long ago). */
  get(instanceId: string, messageId: string): Promise<string | null> {
    return this.bucket.get(keyOf(instanceId, messageId));
  }
}

const keyOf = (instanceId: string, messageId: string): string => `${token(instanceId, 'instance id')}.${token(messageId, 'message id')}`;
