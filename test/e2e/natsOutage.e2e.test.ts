import { startStack, type TestStack } from '../harness/stack';

const waitUntil = async (check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
};

describe('NATS outage over HTTP', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('answers 503 with a clear error while NATS is down, and recovers by itself when it is back', async () => {
    const created = await stack.call('/v1/create_instance');
    const id = created.body.instance_id as string;
    await stack.nats.stop();

    const started = Date.now();
    const down = await stack.call('/v1/create_instance');
    expect(down).toEqual({ status: 503, body: { error: 'The event store (NATS) is unreachable', code: 'event_store_unavailable' } });
    expect(Date.now() - started).toBeLessThan(6_000);
    expect((await stack.call(`/v1/status?instance_id=${id}`)).status).toBe(503);
    expect((await fetch(`http://127.0.0.1:${stack.instances.opsPort}/readyz`)).status).toBe(503);

    await stack.nats.restart();
    const recovered = await waitUntil(async () => (await stack.call('/v1/create_instance')).status === 200, 15_000);
    expect(recovered).toBe(true);
    const status = await stack.call(`/v1/status?instance_id=${id}`);
    expect(status.body).toMatchObject({ instance_id: id, state: 'created' });
    const after = await stack.call('/v1/create_instance');
    const list = await stack.call('/v1/list_instances');
    expect((list.body.instances as Array<{ instance_id: string }>).map((i) => i.instance_id)).toEqual(expect.arrayContaining([id, after.body.instance_id]));
    expect((await fetch(`http://127.0.0.1:${stack.instances.opsPort}/readyz`)).status).toBe(200);
  });
});
