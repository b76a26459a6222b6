import { startGateway, type RunningGateway } from '../../services/gateway/src/service';
import { testLogger } from './logger';
import { TEST_JWT_SECRET } from './stack';

/** The gRPC ports of the services a gateway talks to (on 127.0.0.1). */
export interface ServicePorts {
  instances: number;
  webhooks: number;
  sessions: number;
}

/**
 * A gateway in the test process (sandbox routes on, the test secret, any free port) in front of services that run as
 * processes of their own (`serviceProcess.ts`), as in production.
 */
export const gatewayInFront = (ports: ServicePorts, natsUrl: string, replicaId: string, accountMax = 1_000_000): Promise<RunningGateway> =>
  startGateway(
    {
      host: '127.0.0.1',
      port: 0,
      instancesAddress: `127.0.0.1:${ports.instances}`,
      webhooksAddress: `127.0.0.1:${ports.webhooks}`,
      sessionsAddress: `127.0.0.1:${ports.sessions}`,
      sandbox: true,
      jwtSecret: TEST_JWT_SECRET,
      bodyLimit: 64 * 1024,
      natsUrl,
      replicaId,
      rateLimit: { accountMax, anonymousMax: 10_000, windowMs: 60_000, syncMs: 100 },
    },
    testLogger('gateway'),
  );
