import { startStack, type TestStack } from '../harness/stack';

const tokenIdOf = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { jti: string }).jti;

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

  it('takes every service out of readiness within a probe second while NATS hangs (silent, its connections open), and back after', async () => {
    const services = { instances: stack.instances.opsPort, webhooks: stack.webhooks.opsPort, sessions: stack.sessions.opsPort };
    /** Each service's /readyz status, or 0 when it gave no answer within a probe's usual second. */
    const readiness = async (): Promise<Record<string, number>> => {
      const statuses = await Promise.all(
        Object.values(services).map((port) =>
          fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1_000) }).then(
            (r) => r.status,
            () => 0,
          ),
        ),
      );
      return Object.fromEntries(Object.keys(services).map((name, i) => [name, statuses[i]!]));
    };
    expect(await readiness()).toEqual({ instances: 200, webhooks: 200, sessions: 200 });
    await stack.nats.freeze();
    try {
      // Sessions answered 200 here until its pings to NATS failed (10 s).
      expect(await readiness()).toEqual({ instances: 503, webhooks: 503, sessions: 503 });
    } finally {
      stack.nats.thaw();
    }
    expect(await waitUntil(async () => Object.values(await readiness()).every((status) => status === 200), 10_000)).toBe(true);
  }, 30_000);

  it('answers revoke_token with 503 while NATS is down (it hung, retrying to open the bucket), and revokes once NATS is back', async () => {
    const victim = stack.token('acme');
    const revoke = (): Promise<{ status: number; body: unknown }> =>
      fetch(`${stack.baseUrl}/v1/revoke_token?token_id=${tokenIdOf(victim)}`, {
        headers: { authorization: `Bearer ${stack.token('acme')}` },
        signal: AbortSignal.timeout(10_000),
      }).then(
        async (r) => ({ status: r.status, body: await r.json() }),
        (error: unknown) => ({ status: 0, body: `no answer: ${String(error)}` }),
      );
    await stack.nats.stop();
    try {
      const started = Date.now();
      expect(await revoke()).toEqual({ status: 503, body: { error: expect.stringContaining('NATS'), code: 'revocation_unavailable' } });
      expect(Date.now() - started).toBeLessThan(6_000);
    } finally {
      await stack.nats.restart();
    }
    expect(await waitUntil(async () => (await revoke()).status === 200, 15_000)).toBe(true);
    expect(await waitUntil(async () => (await stack.call('/v1/list_instances', { token: victim })).status === 401, 3_000)).toBe(true);
  }, 40_000);
});
