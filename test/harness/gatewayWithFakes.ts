import { createLogger, createTokenVerifier } from '@wagw/lib';
import { buildGateway, type GatewayDeps } from '../../services/gateway/src/app';
import { noRevocations } from '../../services/gateway/src/auth/revocations';
import type { InstancesClientApi } from '../../services/gateway/src/instancesClient';
import type { SessionsClientApi } from '../../services/gateway/src/sessionsClient';
import type { WebhooksClientApi } from '../../services/gateway/src/webhooksClient';

/** A fake service client: only the calls the test makes (it never reaches the others). */
type FakeClient = object;

export interface FakeGatewayOptions extends Partial<Omit<GatewayDeps, 'instances' | 'webhooks' | 'sessions' | 'verifyToken'>> {
  /** The JWT secret the gateway verifies tokens with. */
  secret: string;
  instances?: FakeClient;
  webhooks?: FakeClient;
  sessions?: FakeClient;
}

/** What every fake client answers besides its test's calls: healthy, and nothing to close. */
const healthy = { ready: async (): Promise<boolean> => true, close: (): void => undefined };

/**
 * The real gateway (every plugin and route) over fake service clients, for tests of the HTTP edge without gRPC or
 * NATS: no sandbox routes, no revocations, a silent logger, no rate limiter, unless the options say otherwise.
 */
export const gatewayWithFakes = ({ secret, instances, webhooks, sessions, ...deps }: FakeGatewayOptions): ReturnType<typeof buildGateway> =>
  buildGateway({
    sandbox: false,
    revocations: noRevocations,
    logger: createLogger('gateway-test', 'silent'),
    ...deps,
    instances: { ...healthy, ...instances } as unknown as InstancesClientApi,
    webhooks: { ...healthy, ...webhooks } as unknown as WebhooksClientApi,
    sessions: { ...healthy, ...sessions } as unknown as SessionsClientApi,
    verifyToken: createTokenVerifier(secret),
  });
