import { InMemoryEventStore, instanceEvent, instanceIdFor, instanceStream, MAX_PAGE_BYTES, messageEvent, messageStream, type RecordedEvent } from '@wagw/lib';
import { instancesOn } from '../../../../test/harness/instancesService';
import { type InstanceDirectory } from './instanceDirectory';
import { type InstancesService } from './instancesService';
import type { HistoryPage } from './historyQuery';

// Application tests of the history's byte budget: the real service on the in-memory store.

const NOW = '2026-11-22T10:00:00.000Z';
const ID = instanceIdFor('acme', 'create-1');
/** 40,000 characters, 120,000 bytes in UTF-8: eight such events fit a page, nine do not. */
const TEXT = '€'.repeat(40_000);

describe('history pages by size (application, in-memory store)', () => {
  let store: InMemoryEventStore;
  let directory: InstanceDirectory;
  let service: InstancesService;

  beforeEach(async () => {
    store = new InMemoryEventStore();
    ({ service, directory } = instancesOn(store, { now: () => new Date(NOW) }));
    await store.append(instanceStream(ID), [instanceEvent('InstanceCreated', NOW, { instance_id: ID, account: 'acme' })], {
      expectedVersion: 0,
      commandId: 'c',
    });
  });

  afterEach(async () => {
    service.close();
    await directory.stop();
  });

  const send = (n: number, text = TEXT) =>
    store.append(messageStream(ID, `m${n}`), [messageEvent('MessageAccepted', NOW, { message_id: `m${n}`, to: '4915112345678', type: 'text', text })], {
      expectedVersion: 0,
      commandId: `send-${n}`,
    });

  /** Follows next_cursor like a client, to the end (bounded). */
  const allPages = async (limit: number): Promise<HistoryPage[]> => {
    const pages: HistoryPage[] = [];
    for (let cursor: number | null = 0; cursor !== null && pages.length < 100;) {
      const page = await service.history('acme', ID, cursor, limit);
      pages.push(page);
      cursor = page.nextSequence;
    }
    return pages;
  };
  const bytesOf = (page: HistoryPage): number => Buffer.byteLength(`[${page.json.join(',')}]`);
  const streams = (events: RecordedEvent[]): string[] => events.map((e) => e.stream);
  const expected = (sends: number[]): string[] => [instanceStream(ID), ...sends.map((n) => messageStream(ID, `m${n}`))];

  it('ends a page before its JSON passes the byte budget, with fewer events than limit; the next page goes on exactly there', async () => {
    for (let n = 0; n < 30; n++) await send(n);
    const pages = await allPages(1_000);
    expect(pages.map((p) => p.events.length)).toEqual([9, 8, 8, 6]);
    for (const page of pages) expect(bytesOf(page)).toBeLessThanOrEqual(MAX_PAGE_BYTES);
    expect(streams(pages.flatMap((p) => p.events))).toEqual(expected(Array.from({ length: 30 }, (_, n) => n)));
    expect(pages.map((p) => p.json.length)).toEqual(pages.map((p) => p.events.length));
  });

  it('puts an event larger than the budget alone on its page', async () => {
    await send(0, 'x'.repeat(100));
    await send(1, '€'.repeat(MAX_PAGE_BYTES / 2));
    await send(2, 'x'.repeat(100));
    const pages = await allPages(1_000);
    expect(pages.map((p) => streams(p.events))).toEqual([expected([0]), [messageStream(ID, 'm1')], [messageStream(ID, 'm2')]]);
    expect(bytesOf(pages[1]!)).toBeGreaterThan(MAX_PAGE_BYTES);
  });

  it('exports in chunks within the byte budget, every event once', async () => {
    for (let n = 0; n < 30; n++) await send(n);
    const chunks: HistoryPage[] = [];
    for await (const chunk of service.exportHistory('acme', ID, 0)) chunks.push(chunk);
    expect(chunks.length).toBe(4);
    for (const chunk of chunks) expect(Buffer.byteLength(chunk.json.map((line) => `${line}\n`).join(''))).toBeLessThanOrEqual(MAX_PAGE_BYTES);
    expect(streams(chunks.flatMap((c) => c.events))).toEqual(expected(Array.from({ length: 30 }, (_, n) => n)));
  });
});
