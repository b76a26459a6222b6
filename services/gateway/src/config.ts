import { hostname } from 'node:os';
import { envInt, envOptional, envString } from '@wagw/lib';
import type { RateLimitSettings } from './plugins/rateLimit';
import { SSE_DEFAULTS } from './events/sseConnection';

export interface GatewayConfig {
  host: string;
  port: number;
  instancesAddress: string;
  webhooksAddress: string;
  sessionsAddress: string;
  sandbox: boolean;
  jwtSecret: string;
  bodyLimit: number;
  /** `HTTP_IDLE_TIMEOUT_MS`: a connection on which nothing moved this long is closed. */
  idleTimeoutMs?: number;
  /** Where gateway replicas share rate-limit counts; absent = this replica counts alone. */
  natsUrl?: string;
  /** `NATS_REPLICAS`: copies of the bucket the gateway creates (revoked tokens), as every service keeps. */
  natsReplicas?: number;
  replicaId: string;
  rateLimit: RateLimitSettings & { syncMs: number };
  /** `SSE_HEARTBEAT_MS`, `SSE_MAX_BUFFER_BYTES`. */
  sse?: { heartbeatMs: number; maxBufferBytes: number };
}

/** `HTTP_IDLE_TIMEOUT_MS`'s default: above every wait the API makes on purpose (QR_WAIT_MS, SSE heartbeats). */
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => {
  const jwtSecret = envOptional(env, 'AUTH_JWT_SECRET');
  if (!jwtSecret) throw new Error('AUTH_JWT_SECRET is required (the launcher generates one under DATA_DIR)');
  return {
    host: envString(env, 'HOST', '127.0.0.1'),
    port: envInt(env, 'PORT', 3000),
    instancesAddress: envString(env, 'INSTANCES_ADDRESS', '127.0.0.1:50051'),
    webhooksAddress: envString(env, 'WEBHOOKS_ADDRESS', '127.0.0.1:50052'),
    sessionsAddress: envString(env, 'SESSIONS_ADDRESS', '127.0.0.1:50053'),
    sandbox: envString(env, 'WA_CONNECTOR', 'baileys') === 'sandbox',
    jwtSecret,
    bodyLimit: envInt(env, 'HTTP_BODY_LIMIT', 64 * 1024),
    idleTimeoutMs: envInt(env, 'HTTP_IDLE_TIMEOUT_MS', DEFAULT_IDLE_TIMEOUT_MS),
    natsUrl: envOptional(env, 'NATS_URL'),
    natsReplicas: envInt(env, 'NATS_REPLICAS', 1),
    replicaId: envString(env, 'GATEWAY_REPLICA_ID', `${hostname()}-${process.pid}`),
    rateLimit: {
      accountMax: envInt(env, 'RATE_LIMIT_ACCOUNT_MAX', 6_000),
      anonymousMax: envInt(env, 'RATE_LIMIT_ANONYMOUS_MAX', 60),
      windowMs: Math.max(1, envInt(env, 'RATE_LIMIT_WINDOW_MS', 60_000)),
      syncMs: Math.max(1, envInt(env, 'RATE_LIMIT_SYNC_MS', 100)),
    },
    sse: {
      heartbeatMs: envInt(env, 'SSE_HEARTBEAT_MS', SSE_DEFAULTS.heartbeatMs),
      maxBufferBytes: envInt(env, 'SSE_MAX_BUFFER_BYTES', SSE_DEFAULTS.maxBufferBytes),
    },
  };
};
