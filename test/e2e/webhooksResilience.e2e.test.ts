import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { startWebhooksService, type RunningWebhooksService } from '../../services/webhooks/src/service';
import { testLogger } from '../harness/logger';
import { startStack, testWebhooksConfig, type TestStack } from '../harness/stack';
import { WebhookReceiver } from '../harness/webhookReceiver';

const WEBHOOKS_MAIN = resolve(__dirname, '../../services/webhooks/dist/main.js');

describe('webhook delivery: crashes, NATS restarts, replicas', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    stack = await startStack();
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await stack.close();
    await receiver.stop();
  });

  const instanceWithWebhook = async (path: string): Promise<string> => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const set = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(receiver.url(path))}`);
    receiver.secret(path, set.body.signing_secret as string);
    return id;
  };

  /** A webhooks replica as its own process, as in production. */
  const spawnReplica = (name: string): ChildProcess => {
    const child = spawn(process.execPath, [WEBHOOKS_MAIN], {
      env: {
        ...process.env,
        NATS_URL: stack.nats.url,
        WEBHOOKS_GRPC_ADDRESS: '127.0.0.1:0',
        OPS_PORT: '0',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0,1500ms,1500ms,1500ms,1500ms',
        WEBHOOKS_WORKER_ID: name,
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_ACK_WAIT_MS: '7000',
        LOG_LEVEL: 'silent',
      },
      stdio: 'ignore',
    });
    children.push(child);
    return child;
  };

  it('delivers a pending retry after the replica holding it is SIGKILLed and NATS restarts', async () => {
    await stack.webhooks.close();
    const id = await instanceWithWebhook('/crash');
    receiver.script('/crash', { status: 500 });
    const first = spawnReplica('replica-a');
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    const [failed] = await receiver.waitFor('/crash', 1, 15_000);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    await stack.nats.restart();
    spawnReplica('replica-b');
    const all = await receiver.waitFor('/crash', 2, 40_000);
    expect(all.map((r) => r.id)).toEqual([failed!.id, failed!.id]);
    // Acked after the 200: no further attempt comes (the schedule would retry within 1.5 s).
    await new Promise((r) => setTimeout(r, 2_500));
    expect(receiver.on('/crash')).toHaveLength(2);
  }, 60_000);
});

describe('webhook delivery: two replicas share the load', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let second: RunningWebhooksService;
  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    stack = await startStack({ workerId: 'replica-1', batch: 4 });
    second = await startWebhooksService(testWebhooksConfig(stack.nats.url, { workerId: 'replica-2', batch: 4 }), testLogger('webhooks-2'));
  });
  afterAll(async () => {
    await second.close();
    await stack.close();
    await receiver.stop();
  });

  it('delivers every event exactly once, spread over both replicas', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
      const set = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(receiver.url(`/r${i}`))}`);
      receiver.secret(`/r${i}`, set.body.signing_secret as string);
      ids.push(id);
    }
    const resets = await Promise.all(ids.flatMap((id) => Array.from({ length: 10 }, () => stack.call(`/v1/reset_instance?instance_id=${id}`))));
    expect(resets.map((r) => r.status)).toEqual(resets.map(() => 200));
    for (let i = 0; i < 10; i++) await receiver.waitFor(`/r${i}`, 10, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    const webhookIds = receiver.received.map((r) => r.id);
    expect(webhookIds).toHaveLength(100);
    expect(new Set(webhookIds).size).toBe(100);
    const workers = new Set<string>();
    for (const id of ids) {
      const list = await stack.call(`/v1/webhook_deliveries?instance_id=${id}`);
      for (const d of list.body.deliveries as Array<{ attempts: Array<{ worker: string }> }>) d.attempts.forEach((a) => workers.add(a.worker));
    }
    expect([...workers].sort()).toEqual(['replica-1', 'replica-2']);
  });
});
