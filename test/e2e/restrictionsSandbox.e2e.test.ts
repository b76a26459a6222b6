import type { SandboxPlatform } from '../../services/sessions/src/connector/sandbox';
import { startStack, type TestStack } from '../harness/stack';
import { WebhookReceiver } from '../harness/webhookReceiver';
import { eventually, sleep } from '../harness/wait';
import { linkInSandbox } from '../harness/sandboxLink';

type HistoryEvent = { type: string; stream: string; data: Record<string, unknown> };

/** A restricted account on the sandbox connector, over HTTP: the refused send, status, the webhook, paused sends. */
describe('restrictions with the sandbox connector', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    stack = await startStack();
  }, 60_000);

  afterAll(async () => {
    await stack.close();
    await receiver.stop();
  });

  const sandbox = (): SandboxPlatform => {
    if (!stack.sessions.sandbox) throw new Error('the stack runs no sandbox');
    return stack.sessions.sandbox;
  };

  const history = async (id: string): Promise<HistoryEvent[]> => (await stack.call(`/v1/history?instance_id=${id}&limit=1000`)).body.events as HistoryEvent[];
  const eventsOf = async (id: string, messageId: string) => (await history(id)).filter((e) => e.stream.endsWith(messageId)).map((e) => e.type);
  const send = async (id: string, text: string): Promise<string> => {
    const r = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=${text}`);
    expect(r.status).toBe(200);
    return r.body.message_id as string;
  };
  const status = async (id: string) => (await stack.call(`/v1/status?instance_id=${id}`)).body;

  it('fails the refused send as account_restricted, shows the restriction, announces it, holds later sends and sends them once lifted', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const set = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(receiver.url('/restricted'))}`);
    receiver.secret('/restricted', set.body.signing_secret as string);
    await linkInSandbox(stack, id, '4915100000301');
    expect((await status(id)).restricted).toBeNull();
    expect((await stack.call(`/v1/sandbox/restrict?instance_id=${id}`)).status).toBe(200);

    const refused = await send(id, 'refused');
    const failed = await eventually(
      () => history(id),
      (h) => h.some((e) => e.type === 'MessageFailed'),
    );
    expect(failed.find((e) => e.type === 'MessageFailed')?.data).toMatchObject({ message_id: refused, reason: 'account_restricted' });
    const restricted = await eventually(
      () => status(id),
      (s) => s.restricted !== null,
    );
    expect(restricted.restricted).toEqual({ since: expect.any(String), until: null });
    const hooks = await receiver.waitFor('/restricted', 3);
    expect(hooks.map((h) => h.body.type)).toEqual(expect.arrayContaining(['instance.restricted', 'message.failed']));
    expect(hooks.find((h) => h.body.type === 'instance.restricted')?.body).toMatchObject({ instance_id: id, data: { until: null } });

    const held = await send(id, 'held');
    await sleep(1_500);
    expect(await eventsOf(id, held)).toEqual(['MessageAccepted']);
    expect(sandbox().sent(id)).toEqual([]);

    expect((await stack.call(`/v1/sandbox/restrict?instance_id=${id}&lift=true`)).status).toBe(200);
    await eventually(
      () => eventsOf(id, held),
      (types) => types.includes('MessageSent'),
    );
    expect(
      sandbox()
        .sent(id)
        .map((m) => m.text),
    ).toEqual(['held']);
    expect((await status(id)).restricted).toBeNull();
    expect((await history(id)).map((e) => e.type)).toEqual(expect.arrayContaining(['InstanceRestricted', 'InstanceRestrictionLifted']));
    // The receiver hears that sends go out again.
    const lifted = await eventually(
      async () => receiver.on('/restricted'),
      (all) => all.some((h) => h.body.type === 'instance.restriction_lifted'),
    );
    expect(lifted.find((h) => h.body.type === 'instance.restriction_lifted')?.body).toMatchObject({ instance_id: id, data: {} });
  });

  it('announces a restriction with a known end at once, holds sends until that end, then sends them', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, '4915100000302');
    const before = Date.now();
    expect((await stack.call(`/v1/sandbox/restrict?instance_id=${id}&seconds=3`)).status).toBe(200);
    const shown = await eventually(
      () => status(id),
      (s) => s.restricted !== null,
    );
    const until = Date.parse((shown.restricted as { until: string }).until);
    expect(until).toBeGreaterThanOrEqual(before + 2_900);
    const held = await send(id, 'after the end');
    await sleep(1_000);
    expect(await eventsOf(id, held)).toEqual(['MessageAccepted']);
    await eventually(
      () => eventsOf(id, held),
      (types) => types.includes('MessageSent'),
      10_000,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(until);
    expect(await eventsOf(id, held)).not.toContain('MessageFailed');
    expect((await status(id)).restricted).toBeNull();
    // As it was then: restricted.
    const then = await stack.call(`/v1/status?instance_id=${id}&at=${new Date(until - 500).toISOString()}`);
    expect(then.body.restricted).toEqual(shown.restricted);
  });

  it("refuses seconds with lift, and a restriction of another account's instance", async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    expect(await stack.call(`/v1/sandbox/restrict?instance_id=${id}&seconds=5&lift=true`)).toMatchObject({
      status: 400,
      body: { code: 'invalid_restriction' },
    });
    expect((await stack.call(`/v1/sandbox/restrict?instance_id=${id}&seconds=0`)).status).toBe(400);
    expect(await stack.call(`/v1/sandbox/restrict?instance_id=${id}`, { account: 'someone-else' })).toMatchObject({ status: 404 });
  });
});

describe('a restriction with no known end, after a reconnect', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({}, true, { restrictedPauseMs: 2_000 });
  }, 60_000);

  afterAll(() => stack.close());

  it('holds sends for SEND_RESTRICTED_PAUSE_MS, then probes with one; taken, the restriction is over', async () => {
    const platform = stack.sessions.sandbox;
    if (!platform) throw new Error('the stack runs no sandbox');
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, '4915100000303');
    await stack.call(`/v1/sandbox/restrict?instance_id=${id}`);
    const refused = (await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=refused`)).body.message_id as string;
    const restricted = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.restricted !== null,
    );
    const since = Date.parse((restricted.body.restricted as { since: string }).since);
    // WhatsApp lifts it while the instance is away: the new connection hears nothing of it.
    platform.disconnect(id);
    platform.lift(id);
    const probe = (await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=probe`)).body.message_id as string;
    const sent = await eventually(
      async () => platform.sent(id),
      (s) => s.length === 1,
      15_000,
    );
    expect(sent[0]?.messageId).toBe(probe);
    // Not before the pause ran out (the event's time is taken a moment after the session's own).
    expect(Date.parse(sent[0]!.acceptedAt)).toBeGreaterThanOrEqual(since + 2_000 - 100);
    const status = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.restricted === null,
    );
    expect(status.body).toMatchObject({ state: 'connected', restricted: null });
    const types = ((await stack.call(`/v1/history?instance_id=${id}&limit=1000`)).body.events as HistoryEvent[]).map((e) => [
      e.type,
      e.stream.endsWith(refused),
    ]);
    expect(types).toEqual(
      expect.arrayContaining([
        ['InstanceRestrictionLifted', false],
        ['MessageFailed', true],
      ]),
    );
  });
});
