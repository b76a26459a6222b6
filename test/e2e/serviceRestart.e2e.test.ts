import { freeFixedPort, issueToken } from '@wagw/lib';
import type { RunningGateway } from '../../services/gateway/src/service';
import { gatewayInFront } from '../harness/gatewayInFront';
import { startTestNats, type TestNats } from '../harness/natsServer';
import { startServiceProcess, type ServiceProcess } from '../harness/serviceProcess';
import { TEST_JWT_SECRET } from '../harness/stack';
import { eventually, sleep } from '../harness/wait';

/**
 * The instances and sessions services in processes of their own behind one gateway, restarted (SIGTERM) and
 * killed (SIGKILL) while control calls and sends keep coming over their Call streams: every answer is a 2xx or a
 * clean 503 with a code (never a 500, never a hang), and the gateway serves again once the service is back.
 */
describe('a service restart under traffic', () => {
  let nats: TestNats;
  let instances: ServiceProcess;
  let sessions: ServiceProcess;
  let gateway: RunningGateway;
  let base: string;
  /** A linked sandbox instance (a send needs a linked instance; one that is disconnected queues it). */
  let instanceId: string;
  const headers = { authorization: `Bearer ${issueToken(TEST_JWT_SECRET, 'acme', 3600)}` };

  beforeAll(async () => {
    nats = await startTestNats();
    // Below the ephemeral range (freeFixedPort): a parallel test's outgoing connection cannot take one between the pick and the bind.
    const [instancesPort, sessionsPort, webhooksPort] = [await freeFixedPort(), await freeFixedPort(), await freeFixedPort()];
    // At info: the harness waits for each service's start line.
    const common = { NATS_URL: nats.url, OPS_PORT: '0', LOG_LEVEL: 'info' };
    instances = await startServiceProcess({
      service: 'instances',
      env: { ...common, INSTANCES_GRPC_ADDRESS: `127.0.0.1:${instancesPort}`, INSTANCE_QUOTA: '0' },
    });
    sessions = await startServiceProcess({
      service: 'sessions',
      env: {
        ...common,
        SESSIONS_GRPC_ADDRESS: `127.0.0.1:${sessionsPort}`,
        SESSIONS_REPLICA_ID: 'restart-test',
        WA_CONNECTOR: 'sandbox',
        // Sends queue while the instance is taken over after a crash: no queue limit, no pacing.
        SEND_PACING_MS: '0',
        SEND_QUEUE_MAX: '0',
      },
    });
    // No webhooks service: none of the routes called here uses it.
    gateway = await gatewayInFront({ instances: instancesPort, webhooks: webhooksPort, sessions: sessionsPort }, nats.url, 'restart-test-gateway');
    base = `http://127.0.0.1:${gateway.port}/v1`;
    instanceId = ((await (await fetch(`${base}/create_instance`, { headers })).json()) as { instance_id: string }).instance_id;
    expect((await call(`/get_qrcode?instance_id=${instanceId}`)).status).toBe(200);
    expect((await call(`/sandbox/scan?instance_id=${instanceId}&number=4915112345678`)).status).toBe(200);
    await eventually(
      () => fetch(`${base}/status?instance_id=${instanceId}`, { headers }).then((r) => r.json() as Promise<{ state: string }>),
      (status) => status.state === 'connected',
      10_000,
    );
  }, 90_000);

  afterAll(async () => {
    await gateway?.close();
    await sessions?.stop();
    await instances?.stop();
    await nats?.dispose();
  });

  /** One request, bounded: a hang is reported as status 0. */
  const call = async (path: string, init: RequestInit = {}): Promise<{ status: number; code?: string }> => {
    try {
      const response = await fetch(`${base}${path}`, { ...init, headers: { ...headers, ...init.headers }, signal: AbortSignal.timeout(15_000) });
      const body = (await response.json()) as { code?: string };
      return { status: response.status, code: body.code };
    } catch {
      return { status: 0 };
    }
  };
  const send = (instanceId: string, n: number) =>
    call('/send', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ instance_id: instanceId, number: '4915199999999', type: 'text', message: `restart ${n}` }),
    });

  /** Four callers loop over status, send and create_instance until `stop` (bounded), collecting every answer. */
  const traffic = (instanceId: string) => {
    const answers: Array<{ status: number; code?: string }> = [];
    let running = true;
    const worker = async (): Promise<void> => {
      for (let n = 0; running && n < 10_000; n++) {
        answers.push(await call(`/status?instance_id=${instanceId}`), await send(instanceId, n), await call('/create_instance'));
      }
    };
    const workers = Promise.all([worker(), worker(), worker(), worker()]);
    return {
      answers,
      stop: async () => {
        running = false;
        await workers;
        return answers;
      },
    };
  };

  const expectClean = (answers: Array<{ status: number; code?: string }>): void => {
    const unclean = answers.filter((a) => a.status !== 200 && !(a.status === 503 && a.code));
    expect(unclean).toEqual([]);
  };

  /** Every path answers again: a call of each service (status asks both) and a send. */
  const recovered = (instanceId: string) =>
    eventually(
      async () => [await call(`/status?instance_id=${instanceId}`), await send(instanceId, -1), await call('/create_instance')],
      (answers) => answers.every((a) => a.status === 200),
      20_000,
      100,
    );

  it.each([
    ['instances', 'restart'],
    ['sessions', 'restart'],
    ['instances', 'crash'],
    ['sessions', 'crash'],
  ] as const)(
    '%s %s: clean 503s at worst, then recovery',
    async (service, how) => {
      const load = traffic(instanceId);
      await sleep(500);
      const target = service === 'instances' ? instances : sessions;
      if (how === 'crash') await target.crash();
      await target.restart();
      await sleep(500);
      const answers = await load.stop();
      expectClean(answers);
      // The traffic covered the outage (the service takes about a second to start again) and what went before it.
      const count = (status: number): number => answers.filter((a) => a.status === status).length;
      expect(count(503)).toBeGreaterThan(0);
      expect(count(200)).toBeGreaterThan(0);
      const after = await recovered(instanceId);
      expect(after.map((a) => a.status)).toEqual([200, 200, 200]);
    },
    90_000,
  );
});
