import { createLogger, createTokenVerifier, enableDefaultMetrics, type Logger } from '@wagw/lib';
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
  const app = await buildGateway({
    instances,
    webhooks,
    sessions,
    sandbox: config.sandbox,
    verifyToken: createTokenVerifier(config.jwtSecret),
    logger,
    bodyLimit: config.bodyLimit,
    ...(config.sse ? { sse: config.sse } : {}),
  });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ port }, 'gateway listening');
  return {
    port,
    close: async () => {
      await app.close();
      instances.close();
      webhooks.close();
      sessions.close();
    },
  };
};
