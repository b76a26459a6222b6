import { startStack, type TestStack } from '../harness/stack';
import { WebhookReceiver } from '../harness/webhookReceiver';
import { eventually } from '../harness/wait';

interface DeliveryView {
  delivery_id: string;
  event_type: string;
  status: string;
  reason: string | null;
  attempts: Array<{ attempt: number; outcome: string; status_code: number | null; error: string | null }>;
}

describe('webhook delivery over HTTP', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
    await receiver.stop();
  });

  /** A new instance whose webhook points at `path` on the receiver. */
  const instanceWithWebhook = async (path: string, enable = true): Promise<string> => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const set = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=${enable}&webhook_url=${encodeURIComponent(receiver.url(path))}`);
    expect(set.status).toBe(200);
    receiver.secret(path, set.body.signing_secret as string);
    return id;
  };

  const deliveries = async (id: string, status = ''): Promise<DeliveryView[]> => {
    const r = await stack.call(`/v1/webhook_deliveries?instance_id=${id}${status ? `&status=${status}` : ''}`);
    expect(r.status).toBe(200);
    return r.body.deliveries as DeliveryView[];
  };

  it('delivers instance.reset, signed per Standard Webhooks, with the documented payload', async () => {
    const id = await instanceWithWebhook('/basic');
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    const [got] = await receiver.waitFor('/basic', 1);
    expect(receiver.rejected).toEqual([]);
    expect(got!.body).toEqual({ id: got!.id, type: 'instance.reset', instance_id: id, timestamp: expect.any(String), data: {} });
    const list = await eventually(
      () => deliveries(id),
      (d) => d[0]?.status === 'delivered',
    );
    expect(list).toEqual([
      expect.objectContaining({
        delivery_id: got!.id,
        event_type: 'instance.reset',
        status: 'delivered',
        attempts: [expect.objectContaining({ attempt: 1, outcome: 'delivered', status_code: 200 })],
      }),
    ]);
  });

  it('retries failures on the schedule with the same webhook-id until the endpoint accepts', async () => {
    const id = await instanceWithWebhook('/flaky');
    receiver.script('/flaky', { status: 500 }, { status: 503 });
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    const got = await receiver.waitFor('/flaky', 3);
    expect(new Set(got.map((g) => g.id)).size).toBe(1);
    const [delivery] = await eventually(
      () => deliveries(id),
      (d) => d[0]?.status === 'delivered',
    );
    expect(delivery!.attempts.map((a) => [a.outcome, a.status_code])).toEqual([
      ['retry', 500],
      ['retry', 503],
      ['delivered', 200],
    ]);
  });

  it('honours Retry-After', async () => {
    const id = await instanceWithWebhook('/throttled');
    receiver.script('/throttled', { status: 429, headers: { 'retry-after': '1' } });
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    const [first, second] = await receiver.waitFor('/throttled', 2, 10_000);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(900);
  });

  it('switches the webhook off on 410 Gone, records it, and dead-letters the delivery', async () => {
    const id = await instanceWithWebhook('/gone');
    receiver.script('/gone', { status: 410 });
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    await receiver.waitFor('/gone', 1);
    const status = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => (s.body.webhook as { enabled: boolean }).enabled === false,
    );
    expect(status.body.webhook).toMatchObject({ url: receiver.url('/gone'), enabled: false });
    const history = await stack.call(`/v1/history?instance_id=${id}`);
    expect((history.body.events as Array<{ type: string }>).map((e) => e.type)).toContain('WebhookDisabled');
    const [dead] = await eventually(
      () => deliveries(id, 'dead'),
      (d) => d.length === 1,
    );
    expect(dead!.reason).toContain('410');
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.on('/gone')).toHaveLength(1);
  });

  it('dead-letters a delivery once the schedule is spent, and redelivers it on request', async () => {
    const id = await instanceWithWebhook('/dead');
    receiver.script('/dead', { status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    const [dead] = await eventually(
      () => deliveries(id, 'dead'),
      (d) => d.length === 1,
    );
    expect(dead!.attempts).toHaveLength(4);
    expect(dead!.reason).toBe('retries exhausted after 4 attempt(s)');
    const notFailed = await stack.call(`/v1/redeliver_webhooks?instance_id=${id}&delivery_id=evt_1_0`);
    expect(notFailed.status).toBe(404);
    const redeliver = await stack.call(`/v1/redeliver_webhooks?instance_id=${id}`);
    expect(redeliver.body).toMatchObject({ success: true, delivery_ids: [dead!.delivery_id] });
    await receiver.waitFor('/dead', 5);
    const [done] = await eventually(
      () => deliveries(id),
      (d) => d[0]?.status === 'delivered',
    );
    expect(done!.attempts.map((a) => a.outcome)).toEqual(['retry', 'retry', 'retry', 'retry', 'delivered']);
    const again = await stack.call(`/v1/redeliver_webhooks?instance_id=${id}&delivery_id=${dead!.delivery_id}`);
    expect([again.status, again.body.code]).toEqual([409, 'delivery_not_failed']);
  });

  it('keeps other instances fast while one endpoint hangs', async () => {
    const hung = await instanceWithWebhook('/hung');
    const healthy = await instanceWithWebhook('/healthy');
    receiver.script('/hung', 'hang', 'hang', 'hang');
    await stack.call(`/v1/reset_instance?instance_id=${hung}`);
    await stack.call(`/v1/reset_instance?instance_id=${hung}`);
    await receiver.waitFor('/hung', 1);
    const started = Date.now();
    for (let i = 0; i < 3; i++) await stack.call(`/v1/reset_instance?instance_id=${healthy}`);
    await receiver.waitFor('/healthy', 3, 5_000);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('delivers nothing while the webhook is off, not even later once it is switched on', async () => {
    const id = await instanceWithWebhook('/off', false);
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    await new Promise((r) => setTimeout(r, 500));
    await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(receiver.url('/off'))}`);
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    const got = await receiver.waitFor('/off', 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.on('/off')).toHaveLength(1);
    expect(got[0]!.body.type).toBe('instance.reset');
  });

  it("answers 404 for another account's deliveries and 400 for a bad status filter", async () => {
    const id = await instanceWithWebhook('/owned');
    expect((await stack.call(`/v1/webhook_deliveries?instance_id=${id}`, { account: 'intruder' })).status).toBe(404);
    expect((await stack.call(`/v1/redeliver_webhooks?instance_id=${id}`, { account: 'intruder' })).status).toBe(404);
    expect((await stack.call(`/v1/webhook_deliveries?instance_id=${id}&status=nope`)).status).toBe(400);
  });
});
