import { linkInSandbox } from '../harness/sandboxLink';
import { startStack, type TestStack } from '../harness/stack';
import { eventually } from '../harness/wait';

/**
 * One instance's queue must never hold up another's sends: a disconnected instance with its whole send queue waiting
 * (SEND_QUEUE_MAX, 1,000 here: as many as the in-flight slots of the dispatch consumer sessions once had, which
 * it filled) while a linked instance sends.
 */
const sendWith =
  (stack: () => TestStack) =>
  async (id: string, text: string): Promise<string> => {
    const r = await stack().call('/v1/send', {
      method: 'POST',
      body: JSON.stringify({ instance_id: id, number: '4917612345678', type: 'text', message: text }),
    });
    if (r.status !== 200) throw new Error(`send answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body.message_id as string;
  };
const statesWith =
  (stack: () => TestStack) =>
  async (id: string, messageId: string): Promise<string[]> =>
    ((await stack().call(`/v1/history?instance_id=${id}&message_id=${messageId}`)).body.events as Array<{ type: string }>).map((e) => e.type);

/** `count` sends to `id`, 50 at a time; their message ids in the order sent. */
const sendMany = async (send: (id: string, text: string) => Promise<string>, id: string, count: number, label: string): Promise<string[]> => {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 50) ids.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => send(id, `${label} ${i + j}`)))));
  return ids;
};

/** Two instances created and linked in the sandbox, to these numbers. */
const linkedPair = async (stack: TestStack, first: string, second: string): Promise<[string, string]> => {
  const ids: string[] = [];
  for (const number of [first, second]) {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, number);
    ids.push(id);
  }
  return [ids[0]!, ids[1]!];
};

/** Cuts the instance's network in the sandbox; resolves once its status shows it. */
const cutOff = async (stack: TestStack, id: string): Promise<void> => {
  stack.sessions.sandbox!.cutNetwork(id);
  await eventually(
    () => stack.call(`/v1/status?instance_id=${id}`),
    (s) => s.body.state === 'disconnected' || s.body.state === 'connecting',
  );
};

describe('sends of a linked instance beside a disconnected one with a full queue', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  const send = sendWith(() => stack);
  const statesOf = statesWith(() => stack);

  it('goes out at once, and the waiting queue goes out in order once its instance links', async () => {
    const [waiting, linked] = await linkedPair(stack, '4915100000002', '4915100000001');
    const sandbox = stack.sessions.sandbox!;
    await cutOff(stack, waiting);
    const queued = await sendMany(send, waiting, 1_000, 'queued');
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

/**
 * An instance whose long queue goes out paced (one a second) must not hold up other instances either, nor send out of
 * log order: neither the queue nor the sends accepted for it meanwhile may wait their turn anywhere but in the send
 * ledger. SEND_QUEUE_MAX=0 (no limit) lets more sends wait than the 1,000 in-flight slots the retired dispatch
 * consumer had.
 */
describe('sends of a linked instance beside one whose long queue goes out paced', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({}, true, { pacingMs: 1_000, sendQuotas: { queueMax: 0, dailyCap: 0 } });
  });
  afterAll(async () => {
    await stack.close();
  });

  const send = sendWith(() => stack);
  const statesOf = statesWith(() => stack);

  it('go out at once while the queue and the sends accepted behind it wait their turn', async () => {
    const [busy, linked] = await linkedPair(stack, '4915100000003', '4915100000004');
    await cutOff(stack, busy);
    const queued = await sendMany(send, busy, 1_000, 'queued');
    stack.sessions.sandbox!.restoreNetwork(busy);
    // The queue has begun to go out, one a second.
    await eventually(
      () => statesOf(busy, queued[0]!),
      (types) => types.includes('MessageSent'),
      15_000,
    );
    // Accepted while the queue goes out: each waits behind it.
    await sendMany(send, busy, 1_000, 'behind');

    const started = Date.now();
    const urgent = await send(linked, 'not behind anyone');
    const life = await eventually(
      () => statesOf(linked, urgent),
      (types) => types.includes('MessageSent'),
      20_000,
    );
    expect(life).toContain('MessageSent');
    expect(Date.now() - started).toBeLessThan(10_000);
    // Still in order (the log's: 50 sends at a time are accepted in any order), one a second: the queue's first
    // sends, nothing accepted behind it.
    const sent = stack.sessions.sandbox!.sent(busy).map((s) => s.text);
    const accepted = (await stack.call(`/v1/history?instance_id=${busy}&types=MessageAccepted&limit=100`)).body.events as Array<{
      data: { text: string };
    }>;
    expect(sent.length).toBeLessThan(60);
    expect(sent).toEqual(accepted.slice(0, sent.length).map((e) => e.data.text));
    expect(sent.every((text) => text?.startsWith('queued '))).toBe(true);
  }, 120_000);
});
