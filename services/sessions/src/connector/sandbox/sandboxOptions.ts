import type { SandboxLedger } from './ledger';

export interface SandboxOptions {
  /** A new QR code every this many ms while waiting for a scan. Default 20,000. */
  qrIntervalMs?: number;
  /** QR codes per connection attempt; when the last one expires the attempt ends (`disconnected`, `qr_expired`). Default 5. */
  qrCount?: number;
  /** Delay from a send to its `sent` receipt (the server took it). Default 50. */
  sentDelayMs?: number;
  /** Delay from a send to its `delivered` receipt (or `failed` for a recipient not on the platform). Default 150. */
  deliveredDelayMs?: number;
  /** Delay from a send to its `read` receipt. Default 400. */
  readDelayMs?: number;
  /** The clock for timestamps (inbound messages, records of sends). Timers do not use it. */
  now?: () => Date;
  /** Links and taken message ids; shared (KV) when several replicas use one sandbox. Default: in memory. */
  ledger?: SandboxLedger;
}

/** The timings of a sandbox, defaults filled in. */
export type SandboxTimings = Required<Omit<SandboxOptions, 'now' | 'ledger'>>;

/** The options' timings with their defaults, or a RangeError naming the one that cannot work. */
export const sandboxTimingsOf = (options: SandboxOptions): SandboxTimings => {
  const timings: SandboxTimings = {
    qrIntervalMs: options.qrIntervalMs ?? 20_000,
    qrCount: options.qrCount ?? 5,
    sentDelayMs: options.sentDelayMs ?? 50,
    deliveredDelayMs: options.deliveredDelayMs ?? 150,
    readDelayMs: options.readDelayMs ?? 400,
  };
  const { qrIntervalMs, qrCount, sentDelayMs, deliveredDelayMs, readDelayMs } = timings;
  if (!(qrIntervalMs > 0)) throw new RangeError(`sandbox qrIntervalMs must be positive, got ${qrIntervalMs}`);
  if (!Number.isInteger(qrCount) || qrCount < 1) throw new RangeError(`sandbox qrCount must be a positive integer, got ${qrCount}`);
  for (const [key, value] of Object.entries({ sentDelayMs, deliveredDelayMs, readDelayMs })) {
    if (!(value >= 0) || !Number.isFinite(value)) throw new RangeError(`sandbox ${key} must be a finite number >= 0, got ${value}`);
  }
  return timings;
};
