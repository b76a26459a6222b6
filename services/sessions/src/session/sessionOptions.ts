import type { Ownership } from '@wagw/lib';

/** How the session manager treats the instances' connections (from the sessions service's configuration). */
export interface SessionOptions {
  /** Send a read receipt for every inbound message as it arrives (AUTO_MARK_READ). */
  autoMarkRead: boolean;
  /** How long sends wait after a restriction whose end WhatsApp did not name (SEND_RESTRICTED_PAUSE_MS). */
  restrictedPauseMs: number;
}

export const DEFAULT_SESSION_OPTIONS: SessionOptions = { autoMarkRead: false, restrictedPauseMs: 3_600_000 };

/** What the session manager needs of the instance leases (`Ownership`). */
export type Leases = Pick<Ownership, 'acquire' | 'release' | 'owns' | 'ownedKeys' | 'isFree' | 'onLost' | 'onFreed' | 'stop'>;
