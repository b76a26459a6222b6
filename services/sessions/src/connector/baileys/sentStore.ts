import { BUCKETS } from '@wagw/lib';
import { proto } from '@whiskeysockets/baileys';
import type { NatsHandle } from '@wagw/lib';
import { encodedToken, NatsTextBucket, token, type TextBucket } from './textBucket';

/** How long a sent message is kept: recipients ask for a re-send (retry receipt) within hours, not days. */
export const SENT_TTL_MS = 24 * 3_600_000;

/** A message we sent, under its WhatsApp id. */
export interface SentRecord {
  /** Our message id, which its receipts report. */
  messageId: string;
  /** The content as sent, for Baileys' `getMessage` (re-sending to a device that could not decrypt it). */
  message: proto.IMessage | null;
}

interface StoredRecord {
  messageId: string;
  /** base64 of the protobuf encoding: the exact bytes a re-send encrypts again. */
  message: string | null;
}

const keyOf = (instanceId: string, waId: string): string => `${token(instanceId, 'instance id')}.${encodedToken(waId)}`;

const parse = (text: string): SentRecord | null => {
  const stored = JSON.parse(text) as Partial<StoredRecord>;
  if (typeof stored.messageId !== 'string') return null;
  return {
    messageId: stored.messageId,
    message: typeof stored.message === 'string' ? proto.Message.decode(Buffer.from(stored.message, 'base64')) : null,
  };
};

/**
 * Sent messages per instance in a NATS KV bucket whose entries expire (the bucket's max age): for Baileys'
 * `getMessage`, and to map receipts back to our message ids after a restart or on another replica.
 */
export class SentMessageStore {
  constructor(private readonly bucket: TextBucket) {}

  static async open(nats: NatsHandle, bucket = BUCKETS.waSent, ttlMs = SENT_TTL_MS): Promise<SentMessageStore> {
    return new SentMessageStore(await NatsTextBucket.open(nats, bucket, { ttlMs }));
  }

  async put(instanceId: string, waId: string, record: SentRecord): Promise<void> {
    const stored: StoredRecord = {
      messageId: record.messageId,
      message: record.message ? Buffer.from(proto.Message.encode(record.message).finish()).toString('base64') : null,
    };
    await this.bucket.put(keyOf(instanceId, waId), JSON.stringify(stored));
  }

  async get(instanceId: string, waId: string): Promise<SentRecord | null> {
    const text = await this.bucket.get(keyOf(instanceId, waId));
    return text === null ? null : parse(text);
  }

  /**
   * Erasure: keeps each record's message id (receipts still map) and drops its content (no re-send of it either), for
   * the records written before `before` (ms since the epoch): the sends since are not erased.
   */
  async forgetContent(instanceId: string, before: number): Promise<void> {
    const keys = await this.bucket.keysUnder(token(instanceId, 'instance id'), before);
    await Promise.all(
      keys.map(async (key) => {
        const text = await this.bucket.get(key);
        const record = text === null ? null : parse(text);
        if (record?.message) await this.bucket.put(key, JSON.stringify({ messageId: record.messageId, message: null } satisfies StoredRecord));
      }),
    );
  }

  async purge(instanceId: string): Promise<void> {
    const keys = await this.bucket.keysUnder(token(instanceId, 'instance id'));
    await Promise.all(keys.map((key) => this.bucket.delete(key)));
  }
}
