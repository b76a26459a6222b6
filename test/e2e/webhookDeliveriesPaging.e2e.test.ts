import { startStack, type TestStack } from '../harness/stack';
import { linkInSandbox } from '../harness/sandboxLink';

type DeliveriesPage = { deliveries: Array<{ delivery_id: string }>; next_cursor: string | null };

/**
 * webhook_deliveries pages by count and by size: 600 dead deliveries, each with 4 attempts to a 2,000-character URL,
 * are ~5 MB, more than one gRPC answer carries (4 MiB). A page of them all (limit=1000) answered 500 response_too_large.
 */
describe('webhook_deliveries: a page larger than a gRPC answer', () => {
  let stack: TestStack;
  beforeAll(async () => {
    // No circuit breaker: every attempt is made (and recorded) at once.
    stack = await startStack({ circuitThreshold: 1_000_000_000 });
  }, 60_000);
  afterAll(async () => {
    await stack.close();
  });

  const page = async (id: string, query: string): Promise<{ status: number; body: DeliveriesPage & { code?: string } }> => {
    const r = await stack.call(`/v1/webhook_deliveries?instance_id=${id}&${query}`);
    return { status: r.status, body: r.body as unknown as DeliveriesPage & { code?: string } };
  };

  it('answers limit=1000 with a shorter page and next_cursor, and pages through every delivery', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, '4915100000888');
    // A URL of 2,000 characters (the limit is 2,048) on a port nobody listens on: every attempt fails at once.
    const url = encodeURIComponent(`http://127.0.0.1:1/hook?token=${'a'.repeat(1_970)}`);
    expect((await stack.call(`/v1/set_webhook?instance_id=${id}&webhook_url=${url}&enable=true&events=message.received`)).status).toBe(200);
    const MESSAGES = 600;
    for (let i = 0; i < MESSAGES; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4917600000001&text=m${i + j}`)));
    }
    // Until every delivery is dead-lettered (4 attempts each on the tests' schedule), counted in pages of 100.
    let dead = 0;
    for (let round = 0; round < 120 && dead < MESSAGES; round++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      dead = 0;
      let cursor = '';
      for (let n = 0; n < 20; n++) {
        const r = await page(id, `status=dead&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        if (r.status !== 200) break;
        dead += r.body.deliveries.length;
        cursor = r.body.next_cursor ?? '';
        if (!cursor) break;
      }
    }
    expect(dead).toBe(MESSAGES);

    const seen = new Set<string>();
    let cursor = '';
    for (let n = 0; n < 50; n++) {
      const r = await page(id, `limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
      expect([r.status, r.body.code]).toEqual([200, undefined]);
      if (n === 0) expect(r.body.deliveries.length).toBeLessThan(MESSAGES);
      for (const d of r.body.deliveries) seen.add(d.delivery_id);
      cursor = r.body.next_cursor ?? '';
      if (!cursor) break;
    }
    expect([seen.size, cursor]).toEqual([MESSAGES, '']);
  }, 300_000);
});
