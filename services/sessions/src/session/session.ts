import type { Connection, ConnectionEvent } from '../connector/port';
import type { KnownRestriction } from './sendPause';

export type SessionStatus = 'connecting' | 'qr' | 'connected';

/** One platform connection of an instance on this replica, and what waits on it. */
export interface Session {
  instanceId: string;
  connection: Connection | null;
  status: SessionStatus;
  /** The current QR code: a secret, kept in memory only. */
  qr: string | null;
  /** get_qrcode calls waiting for a QR code or for the connection's end. */
  waiters: Array<() => void>;
  reconnectAttempts: number;
  reconnectTimer: NodeJS.Timeout | null;
  /** Why the connection last ended (disconnected, logged out or failed): what get_qrcode answers if no QR came. */
  endReason: string | null;
  /** The instance's reset count when the connection started: its facts are stale once the instance is reset again. */
  resets: number;
  /** What this connection heard of a restriction of the account's sends (undefined: nothing yet, null: over). */
  restriction: KnownRestriction | null | undefined;
}

export const newSession = (instanceId: string): Session => ({
  instanceId,
  connection: null,
  status: 'connecting',
  qr: null,
  waiters: [],
  reconnectAttempts: 0,
  reconnectTimer: null,
  endReason: null,
  resets: 0,
  restriction: undefined,
});

/** Lets every waiting get_qrcode look at the session again. */
export const wake = (session: Session): void => {
  session.waiters.splice(0).forEach((resume) => resume());
};

/** What follows a connection's change of state: nothing, its end here (after wiping its credentials), or a reconnect. */
export type AfterStateChange = 'stay' | 'end' | 'wipe_and_end' | 'reconnect';

type StateChange = Extract<ConnectionEvent, { type: 'qr' | 'connected' | 'disconnected' | 'logged_out' | 'failed' }>;

/** A connection's change of state applied to its session (a waiting get_qrcode looks again), and what follows. */
export const applyStateChange = (session: Session, event: StateChange): AfterStateChange => {
  switch (event.type) {
    case 'qr':
      session.qr = event.qr;
      session.status = 'qr';
      break;
    case 'connected':
      session.status = 'connected';
      session.qr = null;
      session.reconnectAttempts = 0;
      break;
    case 'disconnected':
      session.qr = null;
      session.endReason = event.reason;
      break;
    case 'logged_out':
    case 'failed':
      session.endReason = event.reason;
      break;
  }
  wake(session);
  if (event.type === 'disconnected') return event.reason === 'qr_expired' ? 'end' : 'reconnect';
  if (event.type === 'logged_out') return 'wipe_and_end';
  return event.type === 'failed' ? 'end' : 'stay';
};
