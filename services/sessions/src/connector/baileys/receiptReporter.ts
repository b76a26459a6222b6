import type { BinaryNode, MessageUserReceiptUpdate, WAMessage, WAMessageKey } from '@whiskeysockets/baileys';
import type { Logger } from '@wagw/lib';
import type { ConnectionEvent, ReceiptStatus } from '../port';
import type { InstanceCaches } from './instanceCaches';
import type { SentMessageStore } from './sentStore';
import { TtlCache } from './ttlCache';
import { platformErrorReason, receiptOf } from './waMessages';

export interface ReceiptReporterParts {
  instanceId: string;
  caches: InstanceCaches;
  sent: SentMessageStore;
  emit: (event: ConnectionEvent) => void;
  logger: Logger;
}

/** A message read was delivered, and one delivered was sent: the receipts each one implies. */
const IMPLIED_RECEIPTS: Record<ReceiptStatus, ReceiptStatus[]> = { sent: [], delivered: ['sent'], read: ['sent', 'delivered'], failed: [] };

/**
 * The receipts of one connection's messages, mapped back from WhatsApp ids to ours and reported once each, in the
 * order they came whatever their id lookups take.
 */
export class ReceiptReporter {
  private chain: Promise<void> = Promise.resolve();
  /** Receipts already reported: a failed ack also comes as an ERROR update, and PLAYED follows READ. */
  private readonly reported = new TtlCache(3_600_000, 5_000);

  constructor(private readonly parts: ReceiptReporterParts) {}

  /** A status update of a message (ours when `fromMe`). */
  onStatus(key: WAMessageKey, { status, messageStubParameters }: Pick<WAMessage, 'status' | 'messageStubParameters'>): void {
    const receipt = receiptOf(status);
    if (!key.fromMe || !key.id || !receipt) return;
    // Typed `any` by Baileys 7: WhatsApp's error code, as text, when there is one.
    const code: unknown = (messageStubParameters as unknown[] | null | undefined)?.[0];
    this.report(key.id, receipt, receipt === 'failed' ? platformErrorReason(typeof code === 'string' ? code : undefined) : undefined);
  }

  /**
   * A participant's receipt of one of our group messages (WhatsApp sends one per participant): the message counts as
   * delivered at the first delivery and read at the first read, as a 1:1 message with one recipient does.
   */
  onGroupReceipt({ key, receipt }: MessageUserReceiptUpdate): void {
    if (!key.fromMe || !key.id) return;
    if (receipt.readTimestamp) this.report(key.id, 'read');
    else if (receipt.receiptTimestamp) this.report(key.id, 'delivered');
  }

  /** The server took (or refused) one of our messages. */
  onAck({ attrs }: BinaryNode): void {
    if (!attrs.id) return;
    if (attrs.error) this.report(attrs.id, 'failed', platformErrorReason(attrs.error));
    else this.report(attrs.id, 'sent');
  }

  /**
   * The message is handed to WhatsApp again (its first `sent` never came, or never got recorded): the server's ack of
   * this hand-over is reported, not dropped as a repeat, or the send would stay queued and be handed out again.
   */
  resending(waId: string): void {
    this.reported.del(`${waId}:sent`);
  }

  /**
   * Reports a receipt. For a message this connection sent, the receipts it implies come first: Baileys folds the
   * status updates it buffers into the latest (read without delivered). Messages of an earlier connection had theirs
   * reported then, so they are not filled in again.
   */
  report(waId: string, status: ReceiptStatus, reason?: string): void {
    if (this.reported.get(`${waId}:sent`)) for (const earlier of IMPLIED_RECEIPTS[status]) this.reportOnce(waId, earlier);
    this.reportOnce(waId, status, reason);
  }

  private reportOnce(waId: string, status: ReceiptStatus, reason?: string): void {
    const seen = `${waId}:${status}`;
    if (this.reported.get(seen)) return;
    this.reported.set(seen, true);
    this.chain = this.chain
      .then(async () => {
        const messageId = await this.messageIdOf(waId);
        if (messageId) this.parts.emit({ type: 'receipt', messageId, status, ...(reason ? { reason } : {}) });
      })
      .catch((error: unknown) => this.parts.logger.warn({ err: error, waId }, 'a receipt could not be mapped to its message'));
  }

  /** Our id of a message we sent, or null for one we did not (sent from the phone, or expired). */
  private async messageIdOf(waId: string): Promise<string | null> {
    const { caches, sent, instanceId } = this.parts;
    const cached = caches.sentIds.get<string>(waId);
    if (cached) return cached;
    const record = await sent.get(instanceId, waId);
    if (record) caches.sentIds.set(waId, record.messageId);
    return record?.messageId ?? null;
  }
}
