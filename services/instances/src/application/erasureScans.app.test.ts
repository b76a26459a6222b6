import {
  ContentKeys,
  InMemoryEventStore,
  InMemoryKeyBucket,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  messageEvent,
  messageStream,
  SealedEventStore,
  type MessageAccepted,
} from '@wagw/lib';
import { instancesOn } from '../../../../test/harness/instancesService';
import { type InstanceDirectory } from './instanceDirectory';
import { type InstancesService } from './instancesService';

// Application tests of history pages and exports around an erasure: two instances replicas (each its own service,
// keys and directory) on one in-memory log and key bucket, as in production on NATS.

const NOW = '2026-11-24T01:00:00.000Z';
const ID = instanceIdFor('acme', 'create-1');
const accepted = (n: number) =>
  messageEvent<MessageAccepted>('MessageAccepted', NOW, {
    message_id: `m${n}`,
    to: '4915112345678',
    type: 'text',
    text: `SECRET-${n}`,
    media_url: null,
    filename: null,
  });

describe('history and export across an erasure (application, in-memory store)', () => {
  const replicas: Array<{ service: InstancesService; directory: InstanceDirectory; keys: ContentKeys }> = [];
  let inner: InMemoryEventStore;
  let bucket: InMemoryKeyBucket;

  const replica = async () => {
    const keys = new ContentKeys(bucket);
    await keys.start();
    const store = new SealedEventStore(inner, keys);
    const { service, directory } = instancesOn(store, { keys });
    replicas.push({ service, directory, keys });
    return { service, store };
  };

  beforeEach(async () => {
    inner = new InMemoryEventStore();
    bucket = new InMemoryKeyBucket();
    const { store } = await replica();
    await store.append(instanceStream(ID), [instanceEvent('InstanceCreated', NOW, { instance_id: ID, account: 'acme' })], {
      expectedVersion: 0,
      commandId: 'c',
    });
    for (const n of [1, 2, 3]) await store.append(messageStream(ID, `m${n}`), [accepted(n)], { expectedVersion: 0, commandId: `a${n}` });
  });

  afterEach(async () => {
    for (const { service, directory, keys } of replicas.splice(0)) {
      service.close();
      keys.stop();
      await directory.stop();
    }
  });

  const texts = (page: { events: Array<{ data: Record<string, unknown> }> }) => page.events.map((e) => e.data.text);
  const types = { types: 'MessageAccepted' };

  it('reads the next page anew after an erasure on this replica: the paused scan held that page, opened before', async () => {
    const { service } = replicas[0]!;
    const first = await service.history('acme', ID, 0, 1, types);
    expect(texts(first)).toEqual(['SECRET-1']);
    await service.eraseData('acme', ID, 'erase-1');
    const next = await service.history('acme', ID, first.nextSequence!, 1, types);
    expect(next.events.map((e) => e.data)).toEqual([{ ...accepted(2).data, text: null, erased: true }]);
  });

  it('reads the next page anew after an erasure on another replica', async () => {
    const pages = replicas[0]!.service;
    const other = (await replica()).service;
    const first = await pages.history('acme', ID, 0, 1, types);
    await other.eraseData('acme', ID, '');
    expect(texts(await pages.history('acme', ID, first.nextSequence!, 1, types))).toEqual([null]);
  });

  it('still continues a paused scan when nothing changed (one scan for the whole paging)', async () => {
    const { service } = replicas[0]!;
    const scan = jest.spyOn(inner, 'scanPattern');
    let page = await service.history('acme', ID, 0, 1, types);
    for (let n = 0; n < 5 && page.nextSequence !== null; n++) page = await service.history('acme', ID, page.nextSequence, 1, types);
    expect(page.nextSequence).toBeNull();
    // The one scan from the start, and the look for commits appended meanwhile that ends every history (commitsFrom).
    expect(scan.mock.calls.map(([, from]) => from)).toEqual([1, 5]);
  });

  it('an export paused between pages reads the next one anew after an erasure on another replica', async () => {
    const exporting = replicas[0]!.service;
    const other = (await replica()).service;
    const many = await replica();
    // Past one export page (1,000 events), so the export pauses with the next page's first commit opened.
    for (let n = 4; n <= 1_001; n++) await many.store.append(messageStream(ID, `m${n}`), [accepted(n)], { expectedVersion: 0, commandId: `a${n}` });
    const pages = exporting.exportHistory('acme', ID, 0, types);
    const first = await pages.next();
    if (first.done) throw new Error('the export ended early');
    expect(texts(first.value)).toEqual(Array.from({ length: 1_000 }, (_, n) => `SECRET-${n + 1}`));
    await other.eraseData('acme', ID, 'erase-1');
    const rest: unknown[] = [];
    for await (const page of pages) rest.push(...texts(page));
    expect(rest).toEqual([null]);
  });
});
