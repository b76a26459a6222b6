import type { ConnectionEvent } from '../port';
import { enqueueReceipts, type PendingReceipt } from './receiptPlan';

export type Stage = 'linking' | 'qr' | 'connected' | 'closed';

/** One connection of an instance to the sandbox, as the platform keeps it. */
export interface OpenConnection {
  /** Names the connection in the ledger's connection records. */
  readonly id: string;
  readonly instanceId: string;
  readonly emit: (event: ConnectionEvent) => void;
  stage: Stage;
  /** The linked number, once connected. */
  number: string | null;
  qr: string | null;
  readonly timers: Set<NodeJS.Timeout>;
  receiptTimer: NodeJS.Timeout | null;
}

/** Runs `run` after `ms` unless the connection closed meanwhile; the timer ends with the connection. */
export const later = (conn: OpenConnection, ms: number, run: () => void): NodeJS.Timeout => {
  const timer = setTimeout(() => {
    conn.timers.delete(timer);
    if (conn.stage !== 'closed') run();
  }, ms);
  timer.unref();
  conn.timers.add(timer);
  return timer;
};

export const clearTimers = (conn: OpenConnection): void => {
  conn.timers.forEach((timer) => clearTimeout(timer));
  conn.timers.clear();
  conn.receiptTimer = null;
};

/**
 * Receipts the platform owes each instance, in the order they fall due. They are reported on the instance's
 * connected connection; what is not reported when a connection ends waits for the next one (as WhatsApp keeps
 * unacknowledged receipts for the device).
 */
export class ReceiptQueue {
  private readonly pending = new Map<string, PendingReceipt[]>();

  add(conn: OpenConnection, receipts: PendingReceipt[]): void {
    const pending = this.pending.get(conn.instanceId) ?? [];
    this.pending.set(conn.instanceId, pending);
    enqueueReceipts(pending, receipts);
    this.schedule(conn);
  }

  /** The link ended: nothing more is owed. */
  drop(instanceId: string): void {
    this.pending.delete(instanceId);
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
        conn.emit({ type: 'receipt', messageId: head.messageId, status: head.status, ...(head.reason ? { reason: head.reason } : {}) });
      }
      if (pending.length === 0 && this.pending.get(conn.instanceId) === pending) this.pending.delete(conn.instanceId);
      this.schedule(conn);
    });
  }
}
