import { startStack, type TestStack } from '../harness/stack';
import { linkInSandbox } from '../harness/sandboxLink';
import { eventually } from '../harness/wait';

interface HistoryEvent {
  type: string;
  data: Record<string, unknown>;
}

/** Erasure against what a client does next: follow a history's next_cursor, retry with the same Idempotency-Key. */
describe('erasure between history pages and under a retried Idempotency-Key (HTTP)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  const linked = async (): Promise<string> => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, '4915112345678');
    return id;
  };
  const events = async (id: string, query = ''): Promise<HistoryEvent[]> =>
    (await stack.call(`/v1/history?instance_id=${id}&limit=1000${query}`)).body.events as HistoryEvent[];

  it('the page after an erasure shows the content erased, though its scan was kept open from the page before', async () => {
    const id = await linked();
    for (const n of [1, 2, 3]) {
      const sent = await stack.call('/v1/send', {
        method: 'POST',
        body: JSON.stringify({ instance_id: id, number: '4917612345678', type: 'text', message: `SECRET-${n}` }),
      });
      expect(sent.status).toBe(200);
    }
    await eventually(
      () => events(id, '&types=MessageAccepted'),
      (e) => e.length === 3,
    );
    const first = await stack.call(`/v1/history?instance_id=${id}&types=MessageAccepted&limit=1`);
    expect(JSON.stringify(first.body.events)).toContain('SECRET-1');
    expect((await stack.call(`/v1/erase_instance_data?instance_id=${id}`)).status).toBe(200);
    const next = await stack.call(`/v1/history?instance_id=${id}&types=MessageAccepted&limit=1&cursor=${first.body.next_cursor as number}`);
    expect(next.status).toBe(200);
    expect((next.body.events as HistoryEvent[]).map((e) => [e.data.text, e.data.erased])).toEqual([[null, true]]);
  });

  it('a retried erasure (same Idempotency-Key) answers the first and leaves a message received since, and its file, alone', async () => {
    const id = await linked();
    const headers = { 'idempotency-key': 'erase-1' };
    const first = await stack.call(`/v1/erase_instance_data?instance_id=${id}`, { headers });
    expect(first.status).toBe(200);
    expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4915100000001&text=AFTER&media=image&media_size=100`)).status).toBe(200);
    const received = await eventually(
      () => events(id, '&types=MessageReceived'),
      (e) => e.length === 1,
    );
    const media = () => stack.call(`/v1/media?instance_id=${id}&message_id=${received[0]!.data.message_id as string}`);
    expect((await media()).status).toBe(200);

    const retry = await stack.call(`/v1/erase_instance_data?instance_id=${id}`, { headers });
    expect(retry.body).toEqual(first.body);
    expect((await events(id, '&types=MessageReceived'))[0]!.data.text).toBe('AFTER');
    expect((await media()).status).toBe(200);
    expect(await events(id, '&types=InstanceDataErased')).toHaveLength(1);

    // A new erasure (no key) erases it, records it, and the file goes with it.
    const again = await stack.call(`/v1/erase_instance_data?instance_id=${id}`);
    expect(again.body.data_erased_at).not.toBe(first.body.data_erased_at);
    expect(await events(id, '&types=InstanceDataErased')).toHaveLength(2);
    expect((await eventually(media, (r) => r.status === 404)).status).toBe(404);
  }, 60_000);
});
