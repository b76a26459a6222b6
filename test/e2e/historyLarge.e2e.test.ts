import { startStack, type TestStack } from '../harness/stack';
import { linkInSandbox } from '../harness/sandboxLink';
import { eventually } from '../harness/wait';

type HistoryEvent = { sequence: number; type: string; stream: string };
type HistoryBody = { events: HistoryEvent[]; next_cursor: number | null };

const SENDS = 250;
/** 4,096 characters of 3 bytes each in UTF-8: a page's length in characters says little about its size. */
const TEXT = '€'.repeat(4_096);
/** A contact card at the 8,192-byte cap. */
const CARD = (() => {
  const head = 'BEGIN:VCARD\nVERSION:3.0\nFN:Jane Doe\nNOTE:';
  const tail = '\nEND:VCARD';
  return `${head}${'n'.repeat(8_192 - head.length - tail.length)}${tail}`;
})();

/**
 * An instance whose history is larger than a gRPC message may be (4 MiB): 250 sends of ~20 KB each. Before, a page
 * of 1,000 events (5 MB) broke the gateway's Call stream to the instances service (503, and unrelated calls on the
 * same stream failed with it) and the export's 1,000-event chunk failed it (500), on every try.
 */
describe('a history larger than a gRPC message', () => {
  let stack: TestStack;
  let id: string;

  beforeAll(async () => {
    stack = await startStack();
    id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, '4915100000777');
    for (let i = 0; i < SENDS; i += 25) {
      const sends = await Promise.all(
        Array.from({ length: 25 }, () =>
          stack.call('/v1/send', {
            method: 'POST',
            body: JSON.stringify({ instance_id: id, number: '4917600000777', type: 'contact', message: TEXT, vcard: CARD }),
          }),
        ),
      );
      expect(sends.map((s) => s.status)).toEqual(Array<number>(25).fill(200));
    }
    // Every message read: the history no longer grows while the test reads it. A loaded machine (CI beside other
    // stacks) may answer one of these reads 503 service_timeout: asked again, not read as a page.
    const read = await eventually(
      async () => ((await stack.call(`/v1/history?instance_id=${id}&types=MessageRead&limit=1000`)).body.events as HistoryEvent[] | undefined)?.length ?? -1,
      (n) => n === SENDS,
      30_000,
      200,
    );
    expect(read).toBe(SENDS);
  }, 120_000);

  afterAll(async () => {
    await stack.close();
  });

  /** Oldest first (events of one commit share its sequence), each message's four events, nothing twice. */
  const expectEveryEventOnce = (events: HistoryEvent[]): void => {
    expect(events.every((e, i) => i === 0 || e.sequence >= events[i - 1]!.sequence)).toBe(true);
    expect(new Set(keys(events)).size).toBe(events.length);
    const count = (type: string): number => events.filter((e) => e.type === type).length;
    const perMessage = ['MessageAccepted', 'MessageSent', 'MessageDelivered', 'MessageRead'];
    expect([count('InstanceCreated'), ...perMessage.map(count)]).toEqual([1, ...perMessage.map(() => SENDS)]);
    expect(new Set(events.filter((e) => e.type === 'MessageAccepted').map((e) => e.stream)).size).toBe(SENDS);
  };

  const get = async (path: string): Promise<{ status: number; text: string }> => {
    const response = await fetch(`${stack.baseUrl}${path}`, { headers: { authorization: `Bearer ${stack.token()}` } });
    return { status: response.status, text: await response.text() };
  };

  /** Pages of up to 1,000 following next_cursor (bounded), each read beside 20 status calls sharing the Call streams. */
  const pagedHistory = async (): Promise<{ events: HistoryEvent[]; sizes: number[]; statuses: number[] }> => {
    const events: HistoryEvent[] = [];
    const sizes: number[] = [];
    const statuses: number[] = [];
    for (let cursor: number | null = 0, pages = 0; cursor !== null && pages < 50; pages++) {
      const [page, ...status] = await Promise.all([
        get(`/v1/history?instance_id=${id}&limit=1000&cursor=${cursor}`),
        ...Array.from({ length: 20 }, () => get(`/v1/status?instance_id=${id}`)),
      ]);
      statuses.push(...status.map((s) => s.status));
      expect([page.status, page.text.slice(0, 200)]).toEqual([200, expect.any(String)]);
      const body = JSON.parse(page.text) as HistoryBody;
      events.push(...body.events);
      sizes.push(Buffer.byteLength(page.text));
      cursor = body.next_cursor;
    }
    return { events, sizes, statuses };
  };
  const keys = (events: HistoryEvent[]): string[] => events.map((e) => `${e.sequence} ${e.stream} ${e.type}`);

  it('pages through every event (pages end early at about 1 MiB), while unrelated calls on the same streams succeed', async () => {
    const { events, sizes, statuses } = await pagedHistory();
    expect(statuses.every((s) => s === 200)).toBe(true);
    // The whole history is over 4 MiB; no page is much over 1 MiB (a page ends before the commit that would pass it).
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(4 * 1024 * 1024);
    expect(Math.max(...sizes)).toBeLessThan(1.1 * 1024 * 1024);
    expect(sizes.length).toBeGreaterThan(4);
    // Every event once, in order: the next page goes on exactly after the last commit of the one before.
    expectEveryEventOnce(events);
  });

  it('exports every event, the same as the pages', async () => {
    const { status, text } = await get(`/v1/history/export?instance_id=${id}`);
    expect(status).toBe(200);
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.at(-1)).toEqual({ next_cursor: null });
    const events = lines.slice(0, -1) as HistoryEvent[];
    expect(Buffer.byteLength(text)).toBeGreaterThan(4 * 1024 * 1024);
    expectEveryEventOnce(events);
    expect(keys(events)).toEqual(keys((await pagedHistory()).events));
  });
});
