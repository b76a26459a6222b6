import { createGatewayClient, type GatewayClient } from '@wagw/client';
import { issueToken, type TokenOptions } from '@wagw/lib';
import { startInstancesService, type RunningInstancesService } from '../../services/instances/src/service';
import { startGateway, type RunningGateway } from '../../services/gateway/src/service';
import type { GatewayConfig } from '../../services/gateway/src/config';
import type { InstancesConfig } from '../../services/instances/src/config';
import { startWebhooksService, type RunningWebhooksService } from '../../services/webhooks/src/service';
import type { WebhooksConfig } from '../../services/webhooks/src/config';
import { startSessionsService, type RunningSessionsService } from '../../services/sessions/src/service';
import type { SessionsConfig } from '../../services/sessions/src/config';
import { startTestNats, type TestNats } from './natsServer';
import { testLogger } from './logger';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

/** The services wired as in production (real NATS, real gRPC, real HTTP on loopback), in this process. */
export interface TestStack {
  nats: TestNats;
  instances: RunningInstancesService;
  webhooks: RunningWebhooksService;
  sessions: RunningSessionsService;
  gateway: RunningGateway;
  /** How the gateway was started: start another replica with it. */
  gatewayConfig: GatewayConfig;
  baseUrl: string;
  token(account?: string, options?: TokenOptions): string;
  /** GET or POST a /v1 path as `account` (default "acme"); `token: null` sends no credential. */
  call(
    path: string,
    options?: { account?: string; token?: string | null; method?: string; body?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** The generated typed client (`@wagw/client`) as `account` (default "acme"); `token: null` sends no credential. */
  client(options?: { account?: string; token?: string | null }): GatewayClient;
  close(): Promise<void>;
}

/** Webhook settings for tests: loopback receivers allowed, and a fast retry schedule. */
export const testWebhooksConfig = (natsUrl: string, overrides: Partial<WebhooksConfig> = {}): WebhooksConfig => ({
  natsUrl,
  grpcAddress: '127.0.0.1:0',
  opsHost: '127.0.0.1',
  opsPort: 0,
  allowPrivateNetworks: true,
  retrySchedule: '0,100ms,200ms,300ms',
  timeoutMs: 2_000,
  // Beyond the time-out: a lane always waits for its attempt (the hand-off to the deliverer has its own tests).
  slowAfterMs: 5_000,
  concurrency: 64,
  circuitThreshold: 5,
  circuitCoolDownMs: 1_000,
  workerId: 'test-webhooks',
  batch: 16,
  ackWaitMs: 7_000,
  leaderTtlMs: 2_000,
  heartbeatMs: 200,
  replayRate: 200,
  ...overrides,
});

/** Sessions settings for tests: the sandbox with short delays, no pacing, loopback media allowed. */
export const testSessionsConfig = (natsUrl: string, overrides: Partial<SessionsConfig> = {}): SessionsConfig => ({
  natsUrl,
  grpcAddress: '127.0.0.1:0',
  opsHost: '127.0.0.1',
  opsPort: 0,
  connector: 'sandbox',
  baileys: {},
  qrWaitMs: 5_000,
  pacingMs: 0,
  // Off, as pacing is: tests that check typing turn it on.
  typing: { msPerChar: 0, minMs: 0, maxMs: 0 },
  numberChecks: { burst: 50, perMinute: 30 },
  sendTtlMs: 24 * 3_600_000,
  sendRetryForMs: 60_000,
  sendQuotas: { queueMax: 1_000, dailyCap: 0 },
  mediaMaxBytes: 1024 * 1024,
  mediaTimeoutMs: 1_000,
  mediaDownloadMaxBytes: 1024 * 1024,
  mediaDownloadsMax: 16,
  autoMarkRead: false,
  restrictedPauseMs: 3_600_000,
  allowPrivateNetworks: true,
  replicaId: `test-sessions-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
  // Production timings: a shorter lease is given up when a busy 2-core machine delays a renewal by a few seconds
  // (a test stack runs every service in one process), which closes connections mid-test.
  leaseTtlMs: 10_000,
  leaseRenewMs: 3_000,
  claimEveryMs: 500,
  sandbox: { sentDelayMs: 10, deliveredDelayMs: 30, readDelayMs: 60, qrIntervalMs: 20_000 },
  ...overrides,
});

export interface StackOptions {
  /**
   * The gateway's sessions target, given the NATS URL: e.g. sessions replicas in processes of their own
   * (`ipv4:127.0.0.1:P1,127.0.0.1:P2`). The in-process sessions service still runs, as one more replica.
   */
  sessionsTarget?: (natsUrl: string) => Promise<string>;
  /** Instances service settings over the tests' defaults (e.g. the instance quota). */
  instances?: Partial<InstancesConfig>;
  /** Gateway settings over the tests' defaults (e.g. rate limits). */
  gateway?: Partial<GatewayConfig>;
}

/** The configuration of one more gateway replica of a running stack (same services, its own replica id). */
let replicas = 0;
export const replicaGatewayConfig = (stack: TestStack, overrides: Partial<GatewayConfig> = {}): GatewayConfig => ({
  ...stack.gatewayConfig,
  replicaId: `test-gateway-replica-${++replicas}`,
  ...overrides,
});

export const startStack = async (
  webhookOverrides: Partial<WebhooksConfig> = {},
  allowPrivateNetworks = true,
  sessionsOverrides: Partial<SessionsConfig> = {},
  options: StackOptions = {},
): Promise<TestStack> => {
  const nats = await startTestNats();
  const instances = await startInstancesService(
    { natsUrl: nats.url, grpcAddress: '127.0.0.1:0', opsHost: '127.0.0.1', opsPort: 0, allowPrivateNetworks, ...options.instances },
    testLogger('instances'),
  );
  const webhooks = await startWebhooksService(testWebhooksConfig(nats.url, webhookOverrides), testLogger('webhooks'));
  const sessions = await startSessionsService(testSessionsConfig(nats.url, sessionsOverrides), testLogger('sessions'));
  const gatewayConfig: GatewayConfig = {
    host: '127.0.0.1',
    port: 0,
    instancesAddress: `127.0.0.1:${instances.grpcPort}`,
    webhooksAddress: `127.0.0.1:${webhooks.grpcPort}`,
    sessionsAddress: options.sessionsTarget ? await options.sessionsTarget(nats.url) : `127.0.0.1:${sessions.grpcPort}`,
    sandbox: true,
    jwtSecret: TEST_JWT_SECRET,
    bodyLimit: 64 * 1024,
    natsUrl: nats.url,
    replicaId: 'test-gateway-1',
    // Generous: the tests of other things send bursts; test/e2e/rateLimits sets its own.
    rateLimit: { accountMax: 100_000, anonymousMax: 10_000, windowMs: 60_000, syncMs: 100 },
    ...options.gateway,
  };
  const gateway = await startGateway(gatewayConfig, testLogger('gateway'));
  const baseUrl = `http://127.0.0.1:${gateway.port}`;
  const token = (account = 'acme', tokenOptions: TokenOptions = {}): string => issueToken(TEST_JWT_SECRET, account, 3600, tokenOptions);
  return {
    nats,
    instances,
    webhooks,
    sessions,
    gateway,
    gatewayConfig,
    baseUrl,
    token,
    call: async (path, options = {}) => {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token !== null) headers.authorization = `Bearer ${options.token ?? token(options.account)}`;
      if (options.body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
      const response = await fetch(`${baseUrl}${path}`, { method: options.method ?? 'GET', headers, body: options.body });
      const text = await response.text();
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { raw: text };
      }
      return { status: response.status, body };
    },
    client: (options = {}) => createGatewayClient({ baseUrl, ...(options.token === null ? {} : { token: options.token ?? token(options.account) }) }),
    close: async () => {
      await gateway.close();
      await webhooks.close();
      await sessions.close();
      await instances.close();
      await nats.dispose();
    },
  };
};
