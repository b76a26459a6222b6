import { connectNats, createLogger, createTokenVerifier, enableDefaultMetrics, type Logger } from '@wagw/lib';
import { natsPeerChannel } from './rateLimit/natsPeerChannel';
import { openRevocations } from './auth/revocations';
import { WindowCounter } from './rateLimit/windowCounter';
import { buildGateway } from './app';
import type { GatewayConfig } from './config';
import { createInstancesClient } from './instancesClient';
import { createWebhooksClient } from './webhooksClient';
import { createSessionsClient } from './sessionsClient';

export interface RunningGateway {
  port: number;
  close(): Promise<void>;
}

export const startGateway = async (config: GatewayConfig, logger: Logger = createLogger('gateway')): Promise<RunningGateway> => {
  enableDefaultMetrics('gateway');
  const instances = createInstancesClient(config.instancesAddress);
  const webhooks = createWebhooksClient(config.webhooksAddress);
  const sessions = createSessionsClient(config.sessionsAddress);
  // NATS only carries what replicas tell each other (rate-limit counts, revoked tokens); requests never wait on it.
  const nats = await connectNats({ url: config.natsUrl, name: `gateway-${config.replicaId}`, logger, replicas: config.natsReplicas ?? 1 });
  const counter = new WindowCounter({ replicaId: config.replicaId, channel: natsPeerChannel(nats, logger), syncMs: config.rateLimit.syncMs });
  counter.start();
  const revocations = await openRevocations(nats, logger);
  const app = await buildGateway({
    instances,
    webhooks,
    sessions,
    sandbox: config.sandbox,
    verifyToken: createTokenVerifier(config.jwtSecret),
    revocations,
    logger,
    bodyLimit: config.bodyLimit,
    ...(config.idleTimeoutMs !== undefined ? { idleTimeoutMs: config.idleTimeoutMs } : {}),
    // Both limits 0: no limiter at all (not even counting).
    ...(config.rateLimit.accountMax > 0 || config.rateLimit.anonymousMax > 0 ? { rateLimit: { counter, settings: config.rateLimit } } : {}),
    ...(config.sse ? { sse: config.sse } : {}),
    ...(config.corsOrigins ? { corsOrigins: config.corsOrigins } : {}),
  });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ port }, 'gateway listening');
  return {
    port,
    close: async () => {
      await app.close();
      counter.stop();
      revocations.close();
      await nats.close();
      instances.close();
      webhooks.close();
      sessions.close();
    },
  };
};
