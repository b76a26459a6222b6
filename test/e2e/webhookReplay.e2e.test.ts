import { stackWithReceiver } from '../harness/receiverStack';
import { eventually } from '../harness/wait';

interface DeliveryView {
  delivery_id: string;
  event_type: string;
  status: string;
  replay_of: string | null;
  attempts: Array<{ outcome: string; status_code: number | null }>;
}

describe('webhook replay over HTTP (GET /v1/replay_webhooks)', () => {
  const env = stackWithReceiver();

  const setWebhook = async (id: string, path: string, enable = true): Promise<void> => {
    const set = await env.stack.call(`/v1/set_webhook?instance_id=${id}&enable=${enable}&webhook_url=${encodeURIComponent(env.receiver.url(path))}`);
    expect(set.status).toBe(200);
    env.receiver.secret(path, set.body.signing_secret as string);
  };
  const deliveries = async (id: string): Promise<DeliveryView[]> =>
    (await env.stack.call(`/v1/webhook_deliveries?instance_id=${id}`)).body.deliveries as DeliveryView[];
  const create = async (): Promise<string> => (await env.stack.call('/v1/create_instance')).body.instance_id as string;

  it('re-delivers past events to the current webhook with their original webhook-id, signed anew, listed as replays', async () => {
    const id = await create();
    const since = new Date(Date.now() - 60_000).toISOString();
    await setWebhook(id, '/old');
    for (let i = 0; i < 3; i++) expect((await env.stack.call(`/v1/reset_instance?instance_id=${id}`)).status).toBe(200);
    const originals = await env.receiver.waitFor('/old', 3);
    // The receiver moved: the replay goes to the webhook as it is now, signed with the (same instance's) secret.
    await setWebhook(id, '/new');

    const replay = await env.stack.call(`/v1/replay_webhooks?instance_id=${id}&since=${encodeURIComponent(since)}&types=instance.reset`);
    expect(replay.status).toBe(200);
    expect(replay.body.replay_id).toMatch(/^rpl_[0-9a-f]+$/);
    const replayed = await env.receiver.waitFor('/new', 3);
    // WebhookReceiver verifies every signature against the current secret; none was refused.
    expect(env.receiver.rejected).toEqual([]);
    expect(replayed.map((r) => r.id)).toEqual(originals.map((o) => o.id));
    expect(replayed.map((r) => r.body)).toEqual(originals.map((o) => o.body));

    const list = await eventually(
      () => deliveries(id),
      (d) => d.filter((x) => x.replay_of !== null && x.status === 'delivered').length === 3,
    );
    const replays = list.filter((d) => d.replay_of !== null);
    expect(replays.map((d) => d.replay_of).sort()).toEqual(originals.map((o) => o.id).sort());
    expect(replays.every((d) => d.delivery_id === `${replay.body.replay_id as string}_${d.replay_of!}`)).toBe(true);
    // The originals' records stay as they were.
    expect(
      list
        .filter((d) => d.replay_of === null)
        .map((d) => d.delivery_id)
        .sort(),
    ).toEqual(originals.map((o) => o.id).sort());
  });

  it('replays through the retry path: a failing receiver gets the same webhook-id again until it accepts', async () => {
    const id = await create();
    await setWebhook(id, '/retry-old');
    await env.stack.call(`/v1/reset_instance?instance_id=${id}`);
    const [original] = await env.receiver.waitFor('/retry-old', 1);
    await setWebhook(id, '/retry-new');
    env.receiver.script('/retry-new', { status: 500 });
    const since = new Date(Date.parse(original!.body.timestamp) - 1).toISOString();
    expect((await env.stack.call(`/v1/replay_webhooks?instance_id=${id}&since=${encodeURIComponent(since)}`)).status).toBe(200);
    const got = await env.receiver.waitFor('/retry-new', 2);
    expect(got.map((g) => g.id)).toEqual([original!.id, original!.id]);
    const [replayDelivery] = await eventually(
      async () => (await deliveries(id)).filter((d) => d.replay_of !== null),
      (d) => d[0]?.status === 'delivered',
    );
    expect(replayDelivery!.attempts.map((a) => [a.outcome, a.status_code])).toEqual([
      ['retry', 500],
      ['delivered', 200],
    ]);
  });

  it('does not replay events before since, after until, or of other types', async () => {
    const id = await create();
    await setWebhook(id, '/window');
    await env.stack.call(`/v1/reset_instance?instance_id=${id}`);
    const [first] = await env.receiver.waitFor('/window', 1);
    const until = new Date(Date.parse(first!.body.timestamp) + 1).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await env.stack.call(`/v1/reset_instance?instance_id=${id}`);
    await env.receiver.waitFor('/window', 2);
    const since = new Date(Date.parse(first!.body.timestamp) - 1).toISOString();
    const windowed = await env.stack.call(`/v1/replay_webhooks?instance_id=${id}&since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`);
    expect(windowed.status).toBe(200);
    const otherType = await env.stack.call(`/v1/replay_webhooks?instance_id=${id}&since=${encodeURIComponent(since)}&types=message.received`);
    expect(otherType.status).toBe(200);
    const got = await env.receiver.waitFor('/window', 3);
    await eventually(
      async () => (await deliveries(id)).filter((d) => d.replay_of !== null),
      (d) => d.length === 1 && d[0]!.status === 'delivered',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(env.receiver.on('/window').map((r) => r.id)).toEqual([first!.id, got[1]!.id, first!.id]);
  });

  it('answers a retry with the same Idempotency-Key with the same replay, each event sent once; another window with 409', async () => {
    const id = await create();
    const since = new Date(Date.now() - 60_000).toISOString();
    for (let i = 0; i < 2; i++) expect((await env.stack.call(`/v1/reset_instance?instance_id=${id}`)).status).toBe(200);
    await setWebhook(id, '/keyed');
    const path = `/v1/replay_webhooks?instance_id=${id}&since=${encodeURIComponent(since)}&types=instance.reset`;
    const headers = { 'Idempotency-Key': `replay-${id}` };
    const first = await env.stack.call(path, { headers });
    const retry = await env.stack.call(path, { headers });
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(retry.body.replay_id).toBe(first.body.replay_id);
    await env.receiver.waitFor('/keyed', 2);
    const other = await env.stack.call(`${path},message.received`, { headers });
    expect([other.status, other.body.code]).toEqual([409, 'idempotency_key_reused']);
    // One replay ran: its two events, each once (a second replay would have sent them again).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(env.receiver.received.filter((r) => r.path === '/keyed')).toHaveLength(2);
  });

  it('answers 409 while the webhook is off and 400 for a bad window or type', async () => {
    const id = await create();
    await setWebhook(id, '/off', false);
    const since = encodeURIComponent(new Date().toISOString());
    const off = await env.stack.call(`/v1/replay_webhooks?instance_id=${id}&since=${since}`);
    expect([off.status, off.body.code]).toEqual([409, 'webhook_disabled']);
    expect(off.body.error).toContain('/v1/set_webhook');
    const bad = async (query: string) => {
      const r = await env.stack.call(`/v1/replay_webhooks?instance_id=${id}&${query}`);
      return [r.status, r.body.code];
    };
    expect(await bad('since=yesterday')).toEqual([400, 'invalid_time']);
    expect(await bad('')).toEqual([400, expect.any(String)]);
    expect(await bad('since=2026-11-23T10:00:00Z&until=2026-11-23T09:00:00Z')).toEqual([400, 'invalid_time_range']);
    expect(await bad(`since=${since}&types=message.nope`)).toEqual([400, 'invalid_types']);
    const other = await env.stack.call(`/v1/replay_webhooks?instance_id=${id}&since=${since}`, { account: 'other' });
    expect(other.status).toBe(404);
  });
});
