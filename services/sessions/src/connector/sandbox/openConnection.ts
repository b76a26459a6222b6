import type { ConnectionEvent } from '../port';

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
