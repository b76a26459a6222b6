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
