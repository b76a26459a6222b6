import type { OpenConnection } from './openConnection';
import { later } from './openConnection';
import type { OwedReceipts } from './owedReceipts';
import type { ReceiptStatus } from '../port';
import { enqueueReceipts, type PendingReceipt } from './receiptPlan';

/** The order of a message's receipts. */
const RANK: Record<ReceiptStatus, number> = { sent: 0, delivered: 1, read: 2, failed: 3 };

/**
 * Receipts the platform owes each instance, in the order they fall due. They are reported on the instance's
 * connected connection; what is not reported when a connection ends waits for the next one (as WhatsApp keeps
 * unacknowledged receipts for the device).
 */
export class ReceiptQueue {
  private readonly pending = new Map<string, PendingReceipt[]>();

  /** `owed`: where the receipts owed outlive this process (a ledger shared by replicas); absent, memory only. */
  constructor(private readonly owed?: OwedReceipts) {}

  /** Owes `receipts` of one message: stored first (when `owed` keeps them: the send fails if they cannot be), then queued. */
  async owe(conn: OpenConnection, receipts: PendingReceipt[]): Promise<void> {
    const [first] = receipts;
    if (this.owed && first) {
      const [monotonic, wall] = [performance.now(), Date.now()];
      const stored = receipts.map((r) => ({ status: r.status, ...(r.reason ? { reason: r.reason } : {}), dueAt: wall + Math.max(0, r.dueAt - monotonic) }));
      await this.owed.owe(conn.instanceId, first.messageId, stored);
    }
    this.add(conn, receipts);
  }

  /**
   * What `owed` says the instance is owed (a replica that took its sends crashed before their receipts came), queued
   * for this connection unless waiting here already. Unreadable now (NATS failing over): the next connection reads it.
   */
  async restore(conn: OpenConnection): Promise<void> {
    const owed = await this.owed?.owedTo(conn.instanceId).catch(() => []);
    if (!owed?.length || conn.stage !== 'connected') return;
    const [monotonic, wall] = [performance.now(), Date.now()];
    const waiting = this.pending.get(conn.instanceId) ?? [];
    const missing = owed.flatMap(({ messageId, receipts }) => {
      // In the order WhatsApp reports them, none due before the one it follows (all past due come at once, in order).
      let notBefore = 0;
      return [...receipts]
        .sort((a, b) => RANK[a.status] - RANK[b.status])
        .map((r) => ({
          messageId,
          status: r.status,
          ...(r.reason ? { reason: r.reason } : {}),
          dueAt: (notBefore = Math.max(notBefore, monotonic + Math.max(0, r.dueAt - wall))),
        }))
        .filter((r) => !waiting.some((w) => w.messageId === messageId && w.status === r.status));
    });
    if (missing.length > 0) this.add(conn, missing);
  }

  /** The link ended: nothing more is owed. */
  drop(instanceId: string): void {
    this.pending.delete(instanceId);
    this.owed?.forget(instanceId);
  }

  private add(conn: OpenConnection, receipts: PendingReceipt[]): void {
    const pending = this.pending.get(conn.instanceId) ?? [];
    this.pending.set(conn.instanceId, pending);
    enqueueReceipts(pending, receipts);
    this.schedule(conn);
  }

  /** Reports the due receipts of the instance on its connected connection, and waits for the next one. */
  schedule(conn: OpenConnection): void {
    if (conn.receiptTimer) {
      clearTimeout(conn.receiptTimer);
      conn.timers.delete(conn.receiptTimer);
      conn.receiptTimer = null;
    }
    const pending = this.pending.get(conn.instanceId);
    const next = pending?.[0];
    if (conn.stage !== 'connected' || !pending || !next) return;
    conn.receiptTimer = later(conn, Math.max(0, next.dueAt - performance.now()), () => {
      conn.receiptTimer = null;
      const now = performance.now();
      for (let head = pending[0]; head && head.dueAt <= now && conn.stage === 'connected'; head = pending[0]) {
        pending.shift();
        // Owed until the session recorded it (reported and lost with a crashed replica, it comes again).
        const owed = this.owed;
        const stored = owed ? { stored: () => owed.paid(conn.instanceId, head.messageId, head.status) } : {};
        conn.emit({ type: 'receipt', messageId: head.messageId, status: head.status, ...(head.reason ? { reason: head.reason } : {}), ...stored });
      }
      if (pending.length === 0 && this.pending.get(conn.instanceId) === pending) this.pending.delete(conn.instanceId);
      this.schedule(conn);
    });
  }
}
