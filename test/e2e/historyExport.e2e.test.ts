import { connectNats, instanceEvent, instanceStream, JetStreamEventStore, type NatsHandle } from '@wagw/lib';
import { startStack, type TestStack } from '../harness/stack';
import { testLogger } from '../harness/logger';

/** GET /v1/history/export: the whole history as NDJSON, a page at a time, with the filters of /v1/history. */
describe('history export (NDJSON)', () => {
  let stack: TestStack;
  let nats: NatsHandle;
  let id: string;
  const HOOKS = 2_500;

  beforeAll(async () => {
    stack = await startStack();
    id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    // A history longer than one page (1,000), written straight to the event store to keep the test quick.
    nats = await connectNats({ url: stack.nats.url, name: 'export-test', logger: testLogger('export-test') });
    const store = await JetStreamEventStore.open(nats);
    const now = new Date().toISOString();
    for (let i = 0; i < HOOKS; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) =>
          store.append(instanceStream(id), [instanceEvent('WebhookConfigured', now, { url: `https://h${i + j}.example/`, enabled: true })], {
            expectedVersion: 'any',
            commandId: `hook-${i + j}`,
          }),
        ),
      );
    }
    expect((await stack.call(`/v1/reset_instance?instance_id=${id}`)).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await nats.close();
    await stack.close();
  });

  const exportLines = async (query = ''): Promise<{ status: number; type: string | null; lines: Array<Record<string, unknown>> }> => {
    const response = await fetch(`${stack.baseUrl}/v1/history/export?instance_id=${id}${query}`, { headers: { authorization: `Bearer ${stack.token()}` } });
    const text = await response.text();
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      lines: text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    };
  };

  it('streams every event, oldest first, then a last line saying it reached the end', async () => {
    const { status, type, lines } = await exportLines();
    expect([status, type]).toEqual([200, 'application/x-ndjson; charset=utf-8']);
    expect(lines.at(-1)).toEqual({ next_cursor: null });
    const events = lines.slice(0, -1) as Array<{ type: string; sequence: number }>;
    expect(events.map((e) => e.type)).toEqual(['InstanceCreated', ...Array<string>(HOOKS).fill('WebhookConfigured'), 'InstanceReset']);
    expect(events.every((e, i) => i === 0 || e.sequence > events[i - 1]!.sequence)).toBe(true);
  });

  it('applies the filters of /v1/history and resumes from a cursor', async () => {
    const { lines } = await exportLines('&types=InstanceCreated,InstanceReset');
    expect(lines.map((l) => l.type ?? 'end')).toEqual(['InstanceCreated', 'InstanceReset', 'end']);
    const all = (await exportLines()).lines.slice(0, -1) as Array<{ sequence: number }>;
    const resumed = (await exportLines(`&cursor=${all[2_000]!.sequence}`)).lines;
    expect(resumed).toHaveLength(all.length - 2_000 + 1);
  });

  it('answers a bad filter or cursor with a plain 400 before streaming anything', async () => {
    for (const [query, code] of [
      ['&types=Nope', 'invalid_types'],
      ['&since=soon', 'invalid_time'],
      ['&cursor=999999999', 'invalid_cursor'],
    ]) {
      const response = await fetch(`${stack.baseUrl}/v1/history/export?instance_id=${id}${query}`, { headers: { authorization: `Bearer ${stack.token()}` } });
      expect([query, response.status, ((await response.json()) as { code: string }).code]).toEqual([query, 400, code]);
    }
    expect((await stack.call(`/v1/history/export?instance_id=${id}`, { account: 'someone-else' })).status).toBe(404);
  });
});
