import { NumberDirectory } from './numberDirectory';
import { TtlCache } from './ttlCache';

/** Baileys' default TTLs (DEFAULT_CACHE_TTLS, seconds there). */
const MINUTES_5 = 5 * 60_000;
const HOUR = 60 * 60_000;

/** The caches of one instance, made once and given to each of its sockets (baileys.md §0.7). */
export interface InstanceCaches {
  readonly msgRetryCounter: TtlCache;
  readonly userDevices: TtlCache;
  readonly callOffer: TtlCache;
  readonly placeholderResend: TtlCache;
  /** makeCacheableSignalKeyStore's cache over the stored Signal keys. */
  readonly signalKeys: TtlCache;
  /** WhatsApp id -> our message id, for the receipts of recent sends (the sent store has them all). */
  readonly sentIds: TtlCache;
  /** Which numbers are on WhatsApp (asked before a send to a new one, and by check_number). */
  readonly numbers: NumberDirectory;
}

export const newInstanceCaches = (): InstanceCaches => ({
  msgRetryCounter: new TtlCache(HOUR),
  userDevices: new TtlCache(MINUTES_5),
  callOffer: new TtlCache(MINUTES_5),
  placeholderResend: new TtlCache(HOUR),
  signalKeys: new TtlCache(MINUTES_5, 50_000),
  sentIds: new TtlCache(24 * HOUR),
  numbers: new NumberDirectory(),
});
