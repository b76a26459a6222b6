/** How a Baileys socket closed: the Boom status code of `lastDisconnect.error`, and its message. */
export interface SocketClose {
  statusCode: number | undefined;
  message: string;
}

/** The last event of a connection that the adapter does not resume by itself. */
export interface EndEvent {
  type: 'disconnected' | 'logged_out' | 'failed';
  reason: string;
}

export type CloseDecision =
  /** Our own `end(undefined)`: nothing to do or report. */
  | { action: 'none' }
  /** A new socket now, on the same creds, with no event: the session never sees it. */
  | { action: 'restart' }
  /** The connection ends with `event`; `purge`: the stored credentials are dead and are wiped first. */
  | { action: 'end'; event: EndEvent; purge: boolean };

/** The message Baileys ends a socket with when the server's QR refs run out (a 408, like a lost connection). */
export const QR_REFS_ENDED = 'QR refs attempts ended';

const end = (type: EndEvent['type'], reason: string, purge = false): CloseDecision => ({ action: 'end', event: { type, reason }, purge });

/**
 * What the adapter does when a socket closes (baileys.md §2.2). Only the restart WhatsApp asks for after pairing
 * (515) is handled inside; every other close ends the connection: terminal ones as `logged_out` or `failed`, the
 * rest as `disconnected`, for the session to reconnect with backoff (or not: 440 means another socket took over,
 * and only the lease holder may come back).
 */
export const decideOnClose = (close: SocketClose | null): CloseDecision => {
  if (close === null) return { action: 'none' };
  switch (close.statusCode) {
    case 515:
      return { action: 'restart' };
    case 401:
      return end('logged_out', 'logged_out_on_phone', true);
    case 403:
      return end('failed', 'forbidden');
    case 405:
      return end('failed', 'client_outdated');
    case 411:
      return end('failed', 'multidevice_mismatch');
    case 440:
      return end('disconnected', 'replaced');
    case 408:
      return end('disconnected', close.message === QR_REFS_ENDED ? 'qr_expired' : 'connection_lost');
    case 428:
      return end('disconnected', 'connection_closed');
    case 500:
      return end('disconnected', 'bad_session');
    case 503:
      return end('disconnected', 'service_unavailable');
    case undefined:
      return end('disconnected', 'connection_error');
    default:
      return end('disconnected', `unknown_${close.statusCode}`);
  }
};

/** How a socket closed, from Baileys' `lastDisconnect.error` (a Boom carrying `output.statusCode`). */
export const closeOf = (error: Error | undefined): SocketClose | null => {
  if (!error) return null;
  const output = (error as { output?: { statusCode?: unknown } }).output;
  const statusCode = typeof output?.statusCode === 'number' ? output.statusCode : undefined;
  return { statusCode, message: error.message };
};
