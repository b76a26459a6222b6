import { connectNats, instanceEvent, instanceStream, JetStreamEventStore } from '@wagw/lib';
import { testLogger } from '../harness/logger';
import { startStack, type TestStack } from '../harness/stack';
import { WebhookReceiver } from '../harness/webhookReceiver';

/** With WEBHOOK_ALLOW_PRIVATE_NETWORKS off (the production default). */
describe('webhook SSRF guard', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    stack = await startStack({ allowPrivateNetworks: false }, false);
  });
  afterAll(async () => {
    await stack.close();
    await receiver.stop();
  });

  it('refuses loopback, private, link-local, cloud-metadata and documentation webhook URLs, and IPv6 wrapping one, at set_webhook', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://10.1.2.3/hook',
      'http://192.168.0.10/hook',
      'http://172.16.5.4/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://0.0.0.0/hook',
      'http://192.0.2.1/hook',
      'https://203.0.113.7/hook',
      'http://[2001:db8::1]/hook',
      // 6to4 and Teredo addresses that wrap 127.0.0.1
      'https://[2002:7f00:1::]/hook',
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook',
    ]) {
      const r = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(url)}`);
      expect([url, r.status, r.body.code]).toEqual([url, 400, 'webhook_url_forbidden']);
      expect(r.body.error).toContain('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true');
    }
    const status = await stack.call(`/v1/status?instance_id=${id}`);
    expect(status.body.webhook).toBeNull();
  });

  it('refuses to connect to a private address at delivery time, even if the URL got in', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    // A URL that resolved to a public address when it was set, and to loopback now (DNS rebinding), looks like this:
    const nats = await connectNats({ url: stack.nats.url, name: 'rebind', logger: testLogger() });
    try {
      const store = await JetStreamEventStore.open(nats);
      await store.append(instanceStream(id), [instanceEvent('WebhookConfigured', new Date().toISOString(), { url: receiver.url('/private'), enabled: true })], {
        expectedVersion: 'any',
        commandId: `rebind-${id}`,
      });
    } finally {
      await nats.close();
    }
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    const deadline = Date.now() + 10_000;
    let attempts: Array<{ outcome: string; error: string | null }> = [];
    while (Date.now() < deadline && attempts.length === 0) {
      const list = await stack.call(`/v1/webhook_deliveries?instance_id=${id}`);
      attempts = (list.body.deliveries as Array<{ attempts: typeof attempts }>)[0]?.attempts ?? [];
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(attempts[0]).toMatchObject({ outcome: 'retry', error: expect.stringMatching(/forbidden|private|not allowed/i) });
    expect(receiver.received).toHaveLength(0);
    expect(receiver.rejected).toHaveLength(0);
  });
});
