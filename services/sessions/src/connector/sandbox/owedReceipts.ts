import type { KV } from '@nats-io/kv';
import { withNats, type NatsHandle } from '@wagw/lib';
import type { ReceiptStatus } from '../port';

/** A receipt the platform owes for a message it took, due at a wall-clock time (it outlives the process). */
export interface OwedReceipt {
  status: ReceiptStatus;
  reason?: string;
  /** Epoch ms. */
  dueAt: number;
}

/**
 * The receipts the platform owes, kept beyond one process: a sessions replica that took a send and crashed before
 * its receipts came took them with it (a send left `sent` or `delivered` for good, as the dispatcher never hands a
 * sent message out again). WhatsApp keeps the receipts it owes a device until the device takes them; so does this.
 */
export interface OwedReceipts {
  /** Stored before the send resolves: a crash after it loses no receipt. */
  owe(instanceId: string, messageId: string, receipts: readonly OwedReceipt[]): Promise<void>;
  /** Recorded by the session (the receipt event's `stored`): owed no more (written in the background). */
  paid(instanceId: string, messageId: string, status: ReceiptStatus): void;
  /** What the instance is owed, by message (read when it comes online). */
  owedTo(instanceId: string): Promise<Array<{ messageId: string; receipts: OwedReceipt[] }>>;
  /** The link ended: nothing more is owed (written in the background). */
  forget(instanceId: string): void;
}

/** A write that NATS did not take is retried this often, this many times (the drills kill NATS nodes). */
const RETRY_MS = 500;
const ATTEMPTS = 60;

/**
 * Owed receipts in a NATS KV bucket, `<instance>.<message>` = the JSON list of that message's receipts still owed
 * (the key deleted once none is). Writes of one key go one after the other (a payment never lands before its debt);
 * this process keeps each key's list while it writes it, so a change needs no read.
 */
export class KvOwedReceipts implements OwedReceipts {
  private readonly lists = new Map<string, { receipts: OwedReceipt[]; writing: Promise<void> }>();

  constructor(
    private readonly nats: NatsHandle,
    private readonly kv: KV,
  ) {}

  /**
   * The message's receipts of these statuses replace any it was owed before (a repeat of a send plans them again).
   * One attempt: the send fails when NATS cannot take it, and its retry plans the receipts again.
   */
  owe(instanceId: string, messageId: string, receipts: readonly OwedReceipt[]): Promise<void> {
    return this.change(`${instanceId}.${messageId}`, (owed) => [...owed.filter((o) => !receipts.some((r) => r.status === o.status)), ...receipts], 1);
  }

  paid(instanceId: string, messageId: string, status: ReceiptStatus): void {
    void this.change(`${instanceId}.${messageId}`, (owed) => owed.filter((o) => o.status !== status), ATTEMPTS).catch(() => undefined);
  }

  async owedTo(instanceId: string): Promise<Array<{ messageId: string; receipts: OwedReceipt[] }>> {
    const keys = await withNats(this.nats, () => this.kv.keys(`${instanceId}.*`));
    const owed: Array<{ messageId: string; receipts: OwedReceipt[] }> = [];
    for await (const key of keys) {
      const entry = await withNats(this.nats, () => this.kv.get(key));
      if (entry?.operation !== 'PUT') continue;
      const receipts = entry.json<OwedReceipt[]>();
      // This process now pays them: it keeps their list, as if it had owed them itself.
      if (!this.lists.has(key)) this.lists.set(key, { receipts, writing: Promise.resolve() });
      owed.push({ messageId: key.slice(instanceId.length + 1), receipts: this.lists.get(key)!.receipts });
    }
    return owed;
  }

  forget(instanceId: string): void {
    void (async () => {
      const keys = await withNats(this.nats, () => this.kv.keys(`${instanceId}.*`));
      for await (const key of keys) void this.change(key, () => [], ATTEMPTS).catch(() => undefined);
    })().catch(() => undefined);
  }

  /** Writes the key's new list (deletes it when empty) after its earlier writes, in up to `attempts` attempts. */
  private change(key: string, next: (owed: OwedReceipt[]) => OwedReceipt[], attempts: number): Promise<void> {
    const previous = this.lists.get(key);
    const receipts = next(previous?.receipts ?? []);
    const write = async (): Promise<void> => {
      for (let attempt = 1; ; attempt++) {
        try {
          await withNats(this.nats, () => (receipts.length === 0 ? this.kv.delete(key) : this.kv.put(key, JSON.stringify(receipts))).then(() => undefined));
          return;
        } catch (error) {
          if (attempt >= attempts) throw error;
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
        }
      }
    };
    const writing = (previous?.writing ?? Promise.resolve()).catch(() => undefined).then(write);
    const entry = { receipts, writing };
    this.lists.set(key, entry);
    // Forgotten once nothing is owed and it is written.
    void writing.then(
      () => {
        if (receipts.length === 0 && this.lists.get(key) === entry) this.lists.delete(key);
      },
      () => undefined,
    );
    return writing;
  }
}
