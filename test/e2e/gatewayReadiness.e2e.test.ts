import { freeFixedPort } from '@wagw/lib';
import type { RunningGateway } from '../../services/gateway/src/service';
import { gatewayInFront } from '../harness/gatewayInFront';
import { startTestNats, type TestNats } from '../harness/natsServer';
import { startServiceProcess, type ServiceProcess } from '../harness/serviceProcess';
import { eventually } from '../harness/wait';

/**
 * README "Health": the gateway's /readyz answers 200 when it reaches the instances, webhooks and sessions services,
 * each within 1 s. A service that hangs (here SIGSTOP: the process keeps its TCP connections, as a stuck event loop
 * does) must take the gateway out of its load balancer within a probe or two, not after the gRPC keepalive's ~30 s
 * while every call times out; and bring it back once the service answers again.
 */
describe('the gateway’s readiness follows its services’ answers', () => {
  let nats: TestNats;
  const services: ServiceProcess[] = [];
  let gateway: RunningGateway;
  let readyz: string;

  beforeAll(async () => {
    nats = await startTestNats();
    const [instancesPort, sessionsPort, webhooksPort] = [await freeFixedPort(), await freeFixedPort(), await freeFixedPort()];
    const common = { NATS_URL: nats.url, OPS_PORT: '0', LOG_LEVEL: 'info' };
    services.push(
      await startServiceProcess({ service: 'instances', env: { ...common, INSTANCES_GRPC_ADDRESS: `127.0.0.1:${instancesPort}` } }),
      await startServiceProcess({ service: 'webhooks', env: { ...common, WEBHOOKS_GRPC_ADDRESS: `127.0.0.1:${webhooksPort}` } }),
      await startServiceProcess({
        service: 'sessions',
        env: { ...common, SESSIONS_GRPC_ADDRESS: `127.0.0.1:${sessionsPort}`, SESSIONS_REPLICA_ID: 'ready-s1', WA_CONNECTOR: 'sandbox' },
      }),
    );
    gateway = await gatewayInFront({ instances: instancesPort, webhooks: webhooksPort, sessions: sessionsPort }, nats.url, 'ready-gateway', 1_000);
    readyz = `http://127.0.0.1:${gateway.port}/readyz`;
  }, 90_000);

  afterAll(async () => {
    for (const service of services) if (service.running) process.kill(service.pid, 'SIGCONT');
    await gateway?.close();
    for (const service of services) await service.stop();
    await nats?.dispose();
  });

  const probe = async (): Promise<{ status: number; body: unknown }> => {
    const response = await fetch(readyz, { signal: AbortSignal.timeout(5_000) });
    return { status: response.status, body: await response.json() };
  };

  it.each(['instances', 'webhooks', 'sessions'])(
    'answers 503 naming the %s service while it hangs, and 200 again once it answers',
    async (name) => {
      expect((await eventually(probe, (answer) => answer.status === 200, 20_000)).status).toBe(200);
      const service = services.find((s) => s.service === name)!;
      process.kill(service.pid, 'SIGSTOP');
      try {
        const started = Date.now();
        const down = await eventually(probe, (answer) => answer.status === 503, 10_000, 100);
        expect(down).toEqual({ status: 503, body: expect.objectContaining({ reason: `${name} service is unreachable` }) });
        // One probe's wait (1 s) and a little: was ~25 s, until the keepalive gave the connection up.
        expect(Date.now() - started).toBeLessThan(4_000);
      } finally {
        process.kill(service.pid, 'SIGCONT');
      }
      expect((await eventually(probe, (answer) => answer.status === 200, 10_000, 100)).status).toBe(200);
    },
    60_000,
  );
});
