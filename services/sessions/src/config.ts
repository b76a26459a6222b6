import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { envBool, envInt, envMs, envPort, envString, invalidArgument, WHATSAPP_FILE_MAX_BYTES, natsSettingsFromEnv, type NatsSettings } from '@wagw/lib';
import { baileysOptionsFromEnv, type BaileysOptions } from './connector/baileys/options';
import type { SendQuotas } from './application/messagesService';
import type { NumberCheckLimits } from './session/numberCheckThrottle';
import type { TypingOptions } from './dispatch/outbound';

export interface SessionsConfig extends NatsSettings {
  grpcAddress: string;
  opsHost: string;
  opsPort: number;
  /** `baileys`: WhatsApp Web (the default); `sandbox`: the simulated platform. */
  connector: 'baileys' | 'sandbox';
  /** Baileys connector settings (WA_WEBSOCKET_URL, WA_VERSION, media upload hosts and TLS). */
  baileys: BaileysOptions;
  qrWaitMs: number;
  pacingMs: number;
  /** "typing…" before a text: `TYPING_MS_PER_CHAR` (0 = off), bounded by `TYPING_MIN_MS` and `TYPING_MAX_MS`. */
  typing: TypingOptions;
  sendTtlMs: number;
  /** How long a send the platform keeps refusing is retried before it fails as `send_failed`. */
  sendRetryForMs: number;
  /** Send quotas per instance: sends waiting to go out (`SEND_QUEUE_MAX`), sends accepted per UTC day (`SEND_DAILY_CAP`); 0 = none. */
  sendQuotas: SendQuotas;
  mediaMaxBytes: number;
  /** The largest received file GET /v1/media hands out, decrypted (MEDIA_DOWNLOAD_MAX_BYTES); larger ones answer 413. */
  mediaDownloadMaxBytes: number;
  /** How many received files one replica downloads or streams at once (MEDIA_DOWNLOADS_MAX); beyond, 429. */
  mediaDownloadsMax: number;
  /**
   * Send a read receipt for every inbound message as it arrives (AUTO_MARK_READ, default off). A deployment-wide
   * switch: blue ticks tell contacts a machine reads them, which is a choice of the operator's use case, not per call.
   */
  autoMarkRead: boolean;
  /**
   * How long an instance's sends wait after WhatsApp refused one as restricted without naming the end
   * (SEND_RESTRICTED_PAUSE_MS, default an hour); then one send probes. A named end is waited for as it is.
   */
  restrictedPauseMs: number;
  mediaTimeoutMs: number;
  allowPrivateNetworks: boolean;
  /** This replica's name in the instance leases (unique per process). */
  replicaId: string;
  /** How long an instance stays with a replica that stopped renewing its lease (a crash): the failover time. */
  leaseTtlMs: number;
  leaseRenewMs: number;
  /** How often a replica looks for linked instances nobody holds. */
  claimEveryMs: number;
  sandbox: { sentDelayMs: number; deliveredDelayMs: number; readDelayMs: number; qrIntervalMs: number };
  /** check_number allowance per instance: a burst, regained at `perMinute` numbers a minute. */
  numberChecks: NumberCheckLimits;
}

/**
 * The longest `get_qrcode`/`get_paircode` waits for the platform (QR_WAIT_MS, and a wait the gateway asks for): a
 * call holds an HTTP request open that long, and WhatsApp shows a new QR code about every 20 s anyway.
 */
export const QR_WAIT_MAX_MS = 60_000;

/**
 * LEASE_TTL_MS and LEASE_RENEW_MS. A replica gives a lease up itself at 3/4 of the TTL after its last renewal
 * (Ownership's safety margin, so an instance never has two connections), so renewing every TTL or more lost every
 * lease between renewals: each linked instance reconnected, a new WhatsApp login, every few seconds. The renewal must
 * come well inside that: at most half the TTL leaves a quarter of it for a renewal that is slow (a NATS node failing
 * over). A third or less (the default is 0.3) also survives one renewal that fails outright.
 */
const leaseTimings = (env: NodeJS.ProcessEnv): { leaseTtlMs: number; leaseRenewMs: number } => {
  const leaseTtlMs = envMs(env, 'LEASE_TTL_MS', 10_000, { min: 1 });
  const leaseRenewMs = envMs(env, 'LEASE_RENEW_MS', 3_000, { min: 1 });
  if (leaseRenewMs * 2 > leaseTtlMs) {
    throw invalidArgument(
      'bad_config',
      `LEASE_RENEW_MS (${leaseRenewMs}) must be at most half of LEASE_TTL_MS (${leaseTtlMs}): a lease renewed later lapses between renewals and its instances reconnect over and over`,
    );
  }
  return { leaseTtlMs, leaseRenewMs };
};

/** TYPING_*: a minimum above the maximum made every "typing…" last the maximum, whatever the text's length. */
const typingTimes = (env: NodeJS.ProcessEnv): { msPerChar: number; minMs: number; maxMs: number } => {
  const minMs = envMs(env, 'TYPING_MIN_MS', 500);
  const maxMs = envMs(env, 'TYPING_MAX_MS', 4_000);
  if (minMs > maxMs) throw invalidArgument('bad_config', `TYPING_MIN_MS (${minMs}) must be at most TYPING_MAX_MS (${maxMs})`);
  return { msPerChar: envMs(env, 'TYPING_MS_PER_CHAR', 40), minMs, maxMs };
};

/** The setting that lets media URLs reach private networks (named in the refusal). */
export const MEDIA_PRIVATE_NETWORKS_SETTING = 'MEDIA_ALLOW_PRIVATE_NETWORKS';

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): SessionsConfig => {
  const connector = envString(env, 'WA_CONNECTOR', 'baileys');
  if (connector !== 'sandbox' && connector !== 'baileys') throw invalidArgument('bad_config', `WA_CONNECTOR must be baileys or sandbox, got '${connector}'`);
  return {
    ...natsSettingsFromEnv(env),
    grpcAddress: envString(env, 'SESSIONS_GRPC_ADDRESS', '127.0.0.1:50053'),
    opsHost: envString(env, 'OPS_HOST', '127.0.0.1'),
    opsPort: envPort(env, 'OPS_PORT', 9103),
    connector,
    baileys: connector === 'baileys' ? baileysOptionsFromEnv(env) : {},
    // 0 would answer qr_timeout at once, every time; above the cap the wait was silently cut to it.
    qrWaitMs: envInt(env, 'QR_WAIT_MS', 20_000, { min: 1, max: QR_WAIT_MAX_MS }),
    pacingMs: envMs(env, 'SEND_PACING_MS', 1_000),
    typing: typingTimes(env),
    numberChecks: { burst: envInt(env, 'NUMBER_CHECKS_BURST', 50), perMinute: envInt(env, 'NUMBER_CHECKS_PER_MINUTE', 30) },
    // 0 would expire every send as it is accepted.
    sendTtlMs: envMs(env, 'SEND_TTL_MS', 24 * 3_600_000, { min: 1 }),
    sendRetryForMs: envMs(env, 'SEND_RETRY_FOR_MS', 60_000),
    sendQuotas: { queueMax: envInt(env, 'SEND_QUEUE_MAX', 1_000), dailyCap: envInt(env, 'SEND_DAILY_CAP', 0) },
    // 0 would fail every media send as too large.
    mediaMaxBytes: envInt(env, 'MEDIA_MAX_BYTES', 16 * 1024 * 1024, { min: 1 }),
    mediaTimeoutMs: envMs(env, 'MEDIA_TIMEOUT_MS', 20_000, { min: 1 }),
    // Up to WhatsApp's largest file (documents, 100 MB).
    mediaDownloadMaxBytes: envInt(env, 'MEDIA_DOWNLOAD_MAX_BYTES', 16 * 1024 * 1024, { min: 1, max: WHATSAPP_FILE_MAX_BYTES }),
    // 0 would answer every GET /v1/media with 429.
    mediaDownloadsMax: envInt(env, 'MEDIA_DOWNLOADS_MAX', 16, { min: 1 }),
    autoMarkRead: envBool(env, 'AUTO_MARK_READ', false),
    restrictedPauseMs: envMs(env, 'SEND_RESTRICTED_PAUSE_MS', 3_600_000),
    allowPrivateNetworks: envBool(env, MEDIA_PRIVATE_NETWORKS_SETTING, false),
    replicaId: envString(env, 'SESSIONS_REPLICA_ID', `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`),
    ...leaseTimings(env),
    // 0 would sweep for unheld instances every millisecond.
    claimEveryMs: envMs(env, 'LEASE_CLAIM_EVERY_MS', 2_000, { min: 1 }),
    sandbox: {
      sentDelayMs: envMs(env, 'SANDBOX_SENT_DELAY_MS', 50),
      deliveredDelayMs: envMs(env, 'SANDBOX_DELIVERED_DELAY_MS', 150),
      readDelayMs: envMs(env, 'SANDBOX_READ_DELAY_MS', 400),
      qrIntervalMs: envMs(env, 'SANDBOX_QR_INTERVAL_MS', 20_000, { min: 1 }),
    },
  };
};
