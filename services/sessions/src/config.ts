import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { envBool, envInt, envString, WHATSAPP_FILE_MAX_BYTES, natsSettingsFromEnv, type NatsSettings } from '@wagw/lib';
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

/** Up to WhatsApp's largest file (documents, 100 MB: WHATSAPP_FILE_MAX_BYTES). */
const mediaDownloadCap = (bytes: number): number => {
  if (bytes < 1 || bytes > WHATSAPP_FILE_MAX_BYTES) throw new Error(`MEDIA_DOWNLOAD_MAX_BYTES must be 1 to ${WHATSAPP_FILE_MAX_BYTES}, got ${bytes}`);
  return bytes;
};

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): SessionsConfig => {
  const connector = envString(env, 'WA_CONNECTOR', 'baileys');
  if (connector !== 'sandbox' && connector !== 'baileys') throw new Error(`WA_CONNECTOR must be baileys or sandbox, got '${connector}'`);
  return {
    ...natsSettingsFromEnv(env),
    grpcAddress: envString(env, 'SESSIONS_GRPC_ADDRESS', '127.0.0.1:50053'),
    opsHost: envString(env, 'OPS_HOST', '127.0.0.1'),
    opsPort: envInt(env, 'OPS_PORT', 9103),
    connector,
    baileys: connector === 'baileys' ? baileysOptionsFromEnv(env) : {},
    qrWaitMs: envInt(env, 'QR_WAIT_MS', 20_000),
    pacingMs: envInt(env, 'SEND_PACING_MS', 1_000),
    typing: { msPerChar: envInt(env, 'TYPING_MS_PER_CHAR', 40), minMs: envInt(env, 'TYPING_MIN_MS', 500), maxMs: envInt(env, 'TYPING_MAX_MS', 4_000) },
    numberChecks: { burst: envInt(env, 'NUMBER_CHECKS_BURST', 50), perMinute: envInt(env, 'NUMBER_CHECKS_PER_MINUTE', 30) },
    sendTtlMs: envInt(env, 'SEND_TTL_MS', 24 * 3_600_000),
    sendRetryForMs: envInt(env, 'SEND_RETRY_FOR_MS', 60_000),
    sendQuotas: { queueMax: envInt(env, 'SEND_QUEUE_MAX', 1_000), dailyCap: envInt(env, 'SEND_DAILY_CAP', 0) },
    mediaMaxBytes: envInt(env, 'MEDIA_MAX_BYTES', 16 * 1024 * 1024),
    mediaTimeoutMs: envInt(env, 'MEDIA_TIMEOUT_MS', 20_000),
    mediaDownloadMaxBytes: mediaDownloadCap(envInt(env, 'MEDIA_DOWNLOAD_MAX_BYTES', 16 * 1024 * 1024)),
    mediaDownloadsMax: envInt(env, 'MEDIA_DOWNLOADS_MAX', 16),
    autoMarkRead: envBool(env, 'AUTO_MARK_READ', false),
    restrictedPauseMs: envInt(env, 'SEND_RESTRICTED_PAUSE_MS', 3_600_000),
    allowPrivateNetworks: envBool(env, 'MEDIA_ALLOW_PRIVATE_NETWORKS', false),
    replicaId: envString(env, 'SESSIONS_REPLICA_ID', `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`),
    leaseTtlMs: envInt(env, 'LEASE_TTL_MS', 10_000),
    leaseRenewMs: envInt(env, 'LEASE_RENEW_MS', 3_000),
    claimEveryMs: envInt(env, 'LEASE_CLAIM_EVERY_MS', 2_000),
    sandbox: {
      sentDelayMs: envInt(env, 'SANDBOX_SENT_DELAY_MS', 50),
      deliveredDelayMs: envInt(env, 'SANDBOX_DELIVERED_DELAY_MS', 150),
      readDelayMs: envInt(env, 'SANDBOX_READ_DELAY_MS', 400),
      qrIntervalMs: envInt(env, 'SANDBOX_QR_INTERVAL_MS', 20_000),
    },
  };
};
