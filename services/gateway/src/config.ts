import { hostname } from 'node:os';
import { envInt, envMs, envOptional, envPort, envString, invalidArgument, natsSettingsFromEnv } from '@wagw/lib';
import { parseCorsOrigins, type CorsOrigins } from './plugins/cors';
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
  /**
   * Where gateway replicas share rate-limit counts and learn revoked tokens: required, since a replica without it
   * would take revoked tokens and count its limits alone.
   */
  natsUrl: string;
  /** `NATS_REPLICAS`: copies of the bucket the gateway creates (revoked tokens), as every service keeps. */
  natsReplicas?: number;
  replicaId: string;
  rateLimit: RateLimitSettings & { syncMs: number };
  /** `SSE_HEARTBEAT_MS`, `SSE_MAX_BUFFER_BYTES`. */
  sse?: { heartbeatMs: number; maxBufferBytes: number };
  /** `CORS_ORIGINS`: web pages of these origins may call the API from a browser (`*`: any); absent, none. */
  corsOrigins?: CorsOrigins;
}

/** `HTTP_IDLE_TIMEOUT_MS`'s default: above every wait the API makes on purpose (QR_WAIT_MS, SSE heartbeats). */
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

/**
 * HTTP_IDLE_TIMEOUT_MS (0 = never, as Node reads it) and SSE_HEARTBEAT_MS. A heartbeat of 0 wrote a comment to every
 * /v1/events stream every millisecond, and "no heartbeat" is no option: an idle stream is then closed by the idle
 * timeout (or a proxy's), so a heartbeat must come sooner than the idle timeout.
 */
const idleAndHeartbeat = (env: NodeJS.ProcessEnv): { idleTimeoutMs: number; heartbeatMs: number } => {
  const idleTimeoutMs = envMs(env, 'HTTP_IDLE_TIMEOUT_MS', DEFAULT_IDLE_TIMEOUT_MS);
  const heartbeatMs = envMs(env, 'SSE_HEARTBEAT_MS', SSE_DEFAULTS.heartbeatMs, { min: 1 });
  if (idleTimeoutMs !== 0 && heartbeatMs >= idleTimeoutMs) {
    throw invalidArgument(
      'bad_config',
      `SSE_HEARTBEAT_MS (${heartbeatMs}) must be below HTTP_IDLE_TIMEOUT_MS (${idleTimeoutMs}): idle event streams would be closed`,
    );
  }
  return { idleTimeoutMs, heartbeatMs };
};

const corsSetting = (env: NodeJS.ProcessEnv): { corsOrigins?: CorsOrigins } => {
  const corsOrigins = parseCorsOrigins(envOptional(env, 'CORS_ORIGINS'));
  return corsOrigins ? { corsOrigins } : {};
};

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => {
  const jwtSecret = envOptional(env, 'AUTH_JWT_SECRET');
  if (!jwtSecret) throw invalidArgument('bad_config', 'AUTH_JWT_SECRET is required (the launcher generates one under DATA_DIR)');
  const { idleTimeoutMs, heartbeatMs } = idleAndHeartbeat(env);
  const { natsUrl, natsReplicas } = natsSettingsFromEnv(env);
  return {
    host: envString(env, 'HOST', '127.0.0.1'),
    port: envPort(env, 'PORT', 3000),
    instancesAddress: envString(env, 'INSTANCES_ADDRESS', '127.0.0.1:50051'),
    webhooksAddress: envString(env, 'WEBHOOKS_ADDRESS', '127.0.0.1:50052'),
    sessionsAddress: envString(env, 'SESSIONS_ADDRESS', '127.0.0.1:50053'),
    sandbox: envString(env, 'WA_CONNECTOR', 'baileys') === 'sandbox',
    jwtSecret,
    // 0 would refuse every request with a body.
    bodyLimit: envInt(env, 'HTTP_BODY_LIMIT', 64 * 1024, { min: 1 }),
    idleTimeoutMs,
    natsUrl,
    natsReplicas,
    replicaId: envString(env, 'GATEWAY_REPLICA_ID', `${hostname()}-${process.pid}`),
    ...corsSetting(env),
    rateLimit: {
      accountMax: envInt(env, 'RATE_LIMIT_ACCOUNT_MAX', 6_000),
      anonymousMax: envInt(env, 'RATE_LIMIT_ANONYMOUS_MAX', 60),
      // Refused rather than raised to 1 ms as before: a 1 ms window is no limit at all.
      windowMs: envMs(env, 'RATE_LIMIT_WINDOW_MS', 60_000, { min: 1 }),
      syncMs: envMs(env, 'RATE_LIMIT_SYNC_MS', 100, { min: 1 }),
    },
    sse: {
      heartbeatMs,
      // 0 would cut every reader off at its first event.
      maxBufferBytes: envInt(env, 'SSE_MAX_BUFFER_BYTES', SSE_DEFAULTS.maxBufferBytes, { min: 1 }),
    },
  };
};
