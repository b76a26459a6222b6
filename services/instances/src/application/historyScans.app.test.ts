import { InMemoryEventStore, instanceEvent, instanceIdFor, instanceStream, messageEvent, messageStream, type Commit } from '@wagw/lib';
import { instancesOn } from '../../../../test/harness/instancesService';
import { type InstanceDirectory } from './instanceDirectory';
import { type InstancesService } from './instancesService';

// Application tests of the store reads kept open between history pages: the real service on the in-memory store,
// counting its open scans (each one an ordered consumer on JetStream).

const NOW = '2026-11-22T10:00:00.000Z';
const ID = instanceIdFor('acme', 'create-1');

/** The in-memory store, counting the scans that are open (started and neither finished nor returned). */
class CountingStore extends InMemoryEventStore {
  openScans = 0;
  override async *scanPattern(pattern: string, fromSequence: number): AsyncGenerator<Commit> {
    this.openScans++;
    try {
      yield* super.scanPattern(pattern, fromSequence);
    } finally {
      this.openScans--;
    }
  }
}

/** Lets a scan's return run to its end. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('history scans kept between pages (application, in-memory store)', () => {
  let store: CountingStore;
  let directory: InstanceDirectory;
  let service: InstancesService;

  beforeEach(async () => {
    store = new CountingStore();
    ({ service, directory } = instancesOn(store, { now: () => new Date(NOW) }));
    await store.append(instanceStream(ID), [instanceEvent('InstanceCreated', NOW, { instance_id: ID, account: 'acme' })], {
      expectedVersion: 0,
      commandId: 'c',
    });
    for (let n = 0; n < 10; n++) {
      await store.append(
        messageStream(ID, `m${n}`),
        [messageEvent('MessageAccepted', NOW, { message_id: `m${n}`, to: '4915112345678', type: 'text', text: 'hi' })],
        {
          expectedVersion: 0,
          commandId: `send-${n}`,
        },
      );
    }
  });

  afterEach(async () => {
    service.close();
    await directory.stop();
  });

  it('holds one store read for a page asked for several times (a refresh, two clients), and continues it to the end', async () => {
    const first = await service.history('acme', ID, 0, 3);
    for (let i = 0; i < 4; i++) expect(await service.history('acme', ID, 0, 3)).toEqual(first);
    await settle();
    expect(store.openScans).toBe(1);
    // The page after it still comes from the scan kept, and the whole history is there once.
    const sequences = first.events.map((e) => e.sequence);
    for (let cursor = first.nextSequence; cursor !== null && sequences.length < 100;) {
      const page = await service.history('acme', ID, cursor, 3);
      sequences.push(...page.events.map((e) => e.sequence));
      cursor = page.nextSequence;
    }
    expect(sequences).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    await settle();
    expect(store.openScans).toBe(0);
  });

  it('closes every paused scan at close() (shutdown)', async () => {
    for (let i = 0; i < 5; i++) await service.history('acme', ID, 0, 3);
    await service.history('acme', ID, 3, 3);
    service.close();
    await settle();
    expect(store.openScans).toBe(0);
  });
});
