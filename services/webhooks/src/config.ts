import { hostname } from 'node:os';
import { envBool, envInt, envMs, envOptional, envPort, envString, natsSettingsFromEnv, type NatsSettings } from '@wagw/lib';

export interface WebhooksConfig extends NatsSettings {
  grpcAddress: string;
  opsHost: string;
  opsPort: number;
  allowPrivateNetworks: boolean;
  /** Comma-separated delays before each attempt (`0,5s,30s,...`); empty = the default schedule. */
  retrySchedule: string | undefined;
  timeoutMs: number;
  /** How long a first attempt holds its instance's lane before it and the instance's next events go to the deliverer. */
  slowAfterMs: number;
  concurrency: number;
  circuitThreshold: number;
  circuitCoolDownMs: number;
  workerId: string;
  /** How long a job held by a replica stays unacked before another replica gets it (after a crash). */
  ackWaitMs: number;
  /** Jobs pulled from NATS at a time. */
  batch: number;
  /** How long the sequencer role stays with a replica that died (the pause of first attempts after a crash). */
  leaderTtlMs: number;
  /** How often a replica announces itself to the others; one silent for 3.5 intervals is gone. */
  heartbeatMs: number;
  /** Replayed deliveries a second at most, per replica (GET /v1/replay_webhooks), beside live ones. */
  replayRate: number;
}

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): WebhooksConfig => {
  return {
    ...natsSettingsFromEnv(env),
    grpcAddress: envString(env, 'WEBHOOKS_GRPC_ADDRESS', '127.0.0.1:50052'),
    opsHost: envString(env, 'OPS_HOST', '127.0.0.1'),
    opsPort: envPort(env, 'OPS_PORT', 9102),
    allowPrivateNetworks: envBool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    retrySchedule: envOptional(env, 'WEBHOOK_RETRY_SCHEDULE'),
    timeoutMs: envMs(env, 'WEBHOOK_TIMEOUT_MS', 15_000, { min: 1 }),
    // 0 is sane: every first attempt goes to the deliverer at once, no lane waits.
    slowAfterMs: envMs(env, 'WEBHOOK_SLOW_AFTER_MS', 5_000),
    // 0 slots would deliver nothing, silently (Lanes waits forever for a slot).
    concurrency: envInt(env, 'WEBHOOK_CONCURRENCY', 256, { min: 1 }),
    circuitThreshold: envInt(env, 'WEBHOOK_CIRCUIT_THRESHOLD', 5, { min: 1 }),
    circuitCoolDownMs: envMs(env, 'WEBHOOK_CIRCUIT_COOLDOWN_MS', 30_000),
    workerId: envString(env, 'WEBHOOKS_WORKER_ID', `${hostname()}-${process.pid}`),
    batch: envInt(env, 'WEBHOOK_PULL_BATCH', 256, { min: 1 }),
    // Raised to WEBHOOK_TIMEOUT_MS + 5 s where it is used (service.ts); 0 reads as "never" or "at once", neither of which
    // it can be, so it is refused rather than silently changed.
    ackWaitMs: envMs(env, 'WEBHOOK_ACK_WAIT_MS', 60_000, { min: 1 }),
    // The lease is renewed every max(100 ms, TTL/4): below 200 ms a renewal would come later than half the TTL, the
    // most the leases allow (see LEASE_RENEW_MS in the sessions config), and the sequencer role would lapse.
    leaderTtlMs: envMs(env, 'WEBHOOK_LEADER_TTL_MS', 10_000, { min: 200 }),
    // 0 would announce every millisecond.
    heartbeatMs: envMs(env, 'WEBHOOK_HEARTBEAT_MS', 1_000, { min: 1 }),
    // 0 would replay one delivery in 1,000 s (the pacer's floor): a replay that never ends.
    replayRate: envInt(env, 'WEBHOOK_REPLAY_RATE', 200, { min: 1 }),
  };
};
