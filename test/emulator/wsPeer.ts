import { WebSocket } from 'ws';

/** The WebSocket of one client connection, as the emulator drives it. */
export interface WsPeer {
  readonly open: boolean;
  /** Sends one binary message; false when the connection is no longer open. */
  send(data: Uint8Array): boolean;
  /** A close frame, then the end of the TCP stream. */
  close(code?: number): void;
  /** Drops the TCP connection without a close frame. */
  destroy(): void;
}

/** A peer that does not read what we write is dropped rather than buffered without end. */
const MAX_OUTBOUND_BYTES = 8 * 1024 * 1024;

export const peerOf = (socket: WebSocket): WsPeer => ({
  get open() {
    return socket.readyState === WebSocket.OPEN;
  },
  send(data) {
    if (socket.readyState !== WebSocket.OPEN) return false;
    if (socket.bufferedAmount > MAX_OUTBOUND_BYTES) {
      socket.terminate();
      return false;
    }
    socket.send(data);
    return true;
  },
  close(code = 1000) {
    if (socket.readyState === WebSocket.OPEN) socket.close(code);
  },
  destroy() {
    socket.terminate();
  },
});
