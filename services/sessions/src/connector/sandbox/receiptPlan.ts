import { RECIPIENT_NOT_ON_PLATFORM, type ReceiptStatus } from '../port';

/** Recipients whose number starts with this are not on the platform: their messages fail, never `sent`. */
export const UNREACHABLE_PREFIX = '000';

export interface PendingReceipt {
  messageId: string;
  status: ReceiptStatus;
  reason?: string;
  /** Monotonic ms (performance.now) when it is due. */
  dueAt: number;
}

export interface ReceiptDelays {
  sentDelayMs: number;
  deliveredDelayMs: number;
  readDelayMs: number;
}

/**
 * The receipts a send gets, due from `at` (pure): sent, then delivered and read, never out of order. A recipient
 * not on the platform gets only `failed`, as with WhatsApp (the Baileys connector asks first and sends nothing): a
 * `message.sent` before it would count as sent a message that never left.
 */
export const plannedReceipts = (
  messageId: string,
  to: string,
  delays: ReceiptDelays,
  at: number,
  unreachable = to.startsWith(UNREACHABLE_PREFIX),
): PendingReceipt[] => {
  const sentAt = at + delays.sentDelayMs;
  const deliveredAt = Math.max(sentAt, at + delays.deliveredDelayMs);
  if (unreachable) {
    return [{ messageId, status: 'failed', reason: RECIPIENT_NOT_ON_PLATFORM, dueAt: sentAt }];
  }
  return [
    { messageId, status: 'sent', dueAt: sentAt },
    { messageId, status: 'delivered', dueAt: deliveredAt },
    { messageId, status: 'read', dueAt: Math.max(deliveredAt, at + delays.readDelayMs) },
  ];
};

/** Inserts receipts into a queue ordered by due time, each after those due at the same time or earlier (stable). */
export const enqueueReceipts = (pending: PendingReceipt[], receipts: PendingReceipt[]): void => {
  for (const receipt of receipts) {
    const index = pending.findIndex((p) => p.dueAt > receipt.dueAt);
    pending.splice(index === -1 ? pending.length : index, 0, receipt);
  }
};
