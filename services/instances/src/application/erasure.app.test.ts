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

// Application tests of erasure: the real service, decider and sealing on the in-memory store; no NATS, no gRPC.

const NOW = '2026-11-24T01:00:00.000Z';
const ID = instanceIdFor('acme', 'create-1');
const accepted = messageEvent<MessageAccepted>('MessageAccepted', NOW, {
  message_id: 'm1',
  to: '4915112345678',
  type: 'text',
  text: 'hello there',
  media_url: null,
  filename: null,
});

describe('InstancesService.eraseData (application, in-memory store)', () => {
  let inner: InMemoryEventStore;
  let store: SealedEventStore;
  let keys: ContentKeys;
  let clock: string;
  let directory: InstanceDirectory;
  let service: InstancesService;

  beforeEach(async () => {
    inner = new InMemoryEventStore();
    keys = new ContentKeys(new InMemoryKeyBucket());
    store = new SealedEventStore(inner, keys);
    clock = NOW;
    ({ service, directory } = instancesOn(store, { keys, now: () => new Date(clock) }));
    await store.append(instanceStream(ID), [instanceEvent('InstanceCreated', NOW, { instance_id: ID, account: 'acme' })], {
      expectedVersion: 0,
      commandId: 'c',
    });
    await store.append(messageStream(ID, 'm1'), [accepted], { expectedVersion: 0, commandId: 'a' });
  });

  afterEach(async () => {
    service.close();
    await directory.stop();
  });

  const LATER = '2026-11-24T02:00:00.000Z';
  const receive = (n: number) =>
    store.append(messageStream(ID, `m${n}`), [{ ...accepted, data: { ...accepted.data, message_id: `m${n}`, text: `text ${n}` } }], {
      expectedVersion: 0,
      commandId: `a${n}`,
    });
  const erasures = async () => (await history()).filter((e) => e.type === 'InstanceDataErased');
  const history = async () => (await service.history('acme', ID, 0, 100)).events.map((e) => ({ type: e.type, data: e.data }));

  it('erases the content of the history, keeps the audit trail and records when', async () => {
    expect((await history())[1]).toEqual({ type: 'MessageAccepted', data: accepted.data });
    const { instance } = await service.eraseData('acme', ID, 'erase-1');
    expect(instance.dataErasedAt).toBe(NOW);
    expect(await history()).toEqual([
      { type: 'InstanceCreated', data: { instance_id: ID, account: 'acme' } },
      { type: 'MessageAccepted', data: { message_id: 'm1', to: '4915112345678', type: 'text', text: null, media_url: null, filename: null, erased: true } },
      { type: 'InstanceDataErased', data: {} },
    ]);
  });

  it('is idempotent: a repeat answers the same and records nothing more', async () => {
    await service.eraseData('acme', ID, 'erase-1');
    const again = await service.eraseData('acme', ID, 'erase-2');
    expect(again.instance.dataErasedAt).toBe(NOW);
    expect((await history()).filter((e) => e.type === 'InstanceDataErased')).toHaveLength(1);
  });

  it("answers 404 for another account's or an unknown instance, and destroys nothing", async () => {
    await expect(service.eraseData('other', ID, 'x')).rejects.toMatchObject({ kind: 'not_found', code: 'instance_not_found' });
    await expect(service.eraseData('acme', instanceIdFor('acme', 'nope'), 'x')).rejects.toMatchObject({ kind: 'not_found' });
    await expect(service.eraseData('acme', 'bad id!', 'x')).rejects.toMatchObject({ kind: 'invalid_argument' });
    expect((await history())[1]!.data).toEqual(accepted.data);
  });

  it('a retry under the same Idempotency-Key answers that erasure and destroys nothing received since', async () => {
    await service.eraseData('acme', ID, 'erase-1');
    await receive(2);
    clock = LATER;
    const retry = await service.eraseData('acme', ID, 'erase-1');
    expect(retry.instance.dataErasedAt).toBe(NOW);
    expect((await history()).find((e) => e.data.message_id === 'm2')?.data.text).toBe('text 2');
    expect(await erasures()).toHaveLength(1);
    // Another key is another erasure: that one erases the content received since, and is recorded.
    expect((await service.eraseData('acme', ID, 'erase-2')).instance.dataErasedAt).toBe(LATER);
    expect((await history()).find((e) => e.data.message_id === 'm2')?.data.text).toBeNull();
    expect(await erasures()).toHaveLength(2);
  });

  it('a retry of an erasure that found nothing to erase destroys nothing received since, and answers as the first', async () => {
    await service.eraseData('acme', ID, 'erase-1');
    // erase-2 comes with no content since erase-1: it destroys nothing, and answers erase-1's time.
    clock = LATER;
    expect((await service.eraseData('acme', ID, 'erase-2')).instance.dataErasedAt).toBe(NOW);
    await receive(2);
    // Its retry (the client timed out, say) is the same request: the message received in between is not its to erase.
    clock = '2026-11-24T03:00:00.000Z';
    expect((await service.eraseData('acme', ID, 'erase-2')).instance.dataErasedAt).toBe(NOW);
    expect((await history()).find((e) => e.data.message_id === 'm2')?.data.text).toBe('text 2');
    expect(await erasures()).toHaveLength(1);
  });

  it('records nothing at all for a repeat that finds nothing to erase and has no command id (no retry can name it)', async () => {
    await service.eraseData('acme', ID, 'erase-1');
    const before = await history();
    expect((await service.eraseData('acme', ID, '')).instance.dataErasedAt).toBe(NOW);
    expect(await history()).toEqual(before);
  });

  it('records an erasure that destroyed the key but stopped before recording, when it is retried', async () => {
    await service.eraseData('acme', ID, 'erase-1');
    await receive(2);
    // The first attempt of erase-2 destroyed the key, then its process died before InstanceDataErased was appended.
    await keys.destroy(ID);
    clock = LATER;
    expect((await service.eraseData('acme', ID, 'erase-2')).instance.dataErasedAt).toBe(LATER);
    expect(await erasures()).toHaveLength(2);
    // Then nothing is left unrecorded: erasing again records nothing more.
    await service.eraseData('acme', ID, 'erase-3');
    expect(await erasures()).toHaveLength(2);
  });

  it('records anew when it destroyed content and the store dropped its record as a racing duplicate', async () => {
    await service.eraseData('acme', ID, 'erase-1');
    await receive(2);
    // This retry reads the log before its first attempt's record is there (the two race), then destroys the new key.
    const read = store.readStream.bind(store);
    jest.spyOn(store, 'readStream').mockImplementation(async (stream, after) => (after === undefined ? [] : read(stream, after)));
    clock = LATER;
    expect((await service.eraseData('acme', ID, 'erase-1')).instance.dataErasedAt).toBe(LATER);
    expect((await history()).find((e) => e.data.message_id === 'm2')?.data.text).toBeNull();
    expect(await erasures()).toHaveLength(2);
  });
});
