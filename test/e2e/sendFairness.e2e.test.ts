import { linkInSandbox } from '../harness/sandboxLink';
import { startStack, type TestStack } from '../harness/stack';
import { eventually } from '../harness/wait';

/**
 * One instance's queue must never hold up another's sends: a disconnected instance with its whole send queue waiting
 * (SEND_QUEUE_MAX, 1,000 here, as many as the dispatch consumer's max_ack_pending) while a linked instance sends.
 */
describe('sends of a linked instance beside a disconnected one with a full queue', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  const send = async (id: string, text: string): Promise<string> => {
    const r = await stack.call('/v1/send', { method: 'POST', body: JSON.stringify({ instance_id: id, number: '4917612345678', type: 'text', message: text }) });
    if (r.status !== 200) throw new Error(`send answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body.message_id as string;
  };
  const statesOf = async (id: string, messageId: string): Promise<string[]> =>
    ((await stack.call(`/v1/history?instance_id=${id}&message_id=${messageId}`)).body.events as Array<{ type: string }>).map((e) => e.type);

  it('goes out at once, and the waiting queue goes out in order once its instance links', async () => {
    const waiting = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const linked = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, waiting, '4915100000002');
    await linkInSandbox(stack, linked, '4915100000001');
    const sandbox = stack.sessions.sandbox!;
    sandbox.cutNetwork(waiting);
    await eventually(
      () => stack.call(`/v1/status?instance_id=${waiting}`),
      (s) => s.body.state === 'disconnected' || s.body.state === 'connecting',
    );

    const queued: string[] = [];
    for (let i = 0; i < 1_000; i += 50) queued.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => send(waiting, `queued ${i + j}`)))));
    const status = await eventually(
      () => stack.call(`/v1/status?instance_id=${waiting}`),
      (s) => (s.body.quotas as { queued_sends: { used: number } }).queued_sends.used === 1_000,
    );
    expect((status.body.quotas as { queued_sends: { used: number } }).queued_sends.used).toBe(1_000);

    const started = Date.now();
    const urgent = await send(linked, 'not behind anyone');
    const life = await eventually(
      () => statesOf(linked, urgent),
      (types) => types.includes('MessageSent'),
      15_000,
    );
    expect(life).toContain('MessageSent');
    expect(Date.now() - started).toBeLessThan(10_000);

    expect(sandbox.sent(waiting)).toEqual([]);
    sandbox.restoreNetwork(waiting);
    const sentPage = await eventually(
      () => stack.call(`/v1/history?instance_id=${waiting}&types=MessageSent&limit=1000`),
      (r) => r.status === 200 && (r.body.events as unknown[]).length === 1_000,
      60_000,
    );
    expect(sentPage.status).toBe(200);
    const history = sentPage.body.events as Array<{ data: { message_id: string } }>;
    // Every one, in the order they were accepted.
    const accepted = (await stack.call(`/v1/history?instance_id=${waiting}&types=MessageAccepted&limit=1000`)).body.events as Array<{
      data: { message_id: string };
    }>;
    expect(new Set(accepted.map((e) => e.data.message_id))).toEqual(new Set(queued));
    expect(history.map((e) => e.data.message_id)).toEqual(accepted.map((e) => e.data.message_id));
  }, 120_000);
});
