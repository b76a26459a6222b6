import {
  ContentKeys,
  InMemoryEventStore,
  InMemoryKeyBucket,
  InMemoryWebhookSecretStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  messageEvent,
  messageStream,
  SealedEventStore,
  type MessageAccepted,
} from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { InstanceDirectory } from './instanceDirectory';
import { InstancesService } from './instancesService';

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
  let keys: ContentKeys;
  let directory: InstanceDirectory;
  let service: InstancesService;

  beforeEach(async () => {
    inner = new InMemoryEventStore();
    keys = new ContentKeys(new InMemoryKeyBucket());
    const store = new SealedEventStore(inner, keys);
    directory = new InstanceDirectory(store, testLogger());
    directory.start();
    service = new InstancesService({
      store,
      secrets: new InMemoryWebhookSecretStore(),
      directory,
      keys,
      checkWebhookUrl: async () => undefined,
      now: () => new Date(NOW),
    });
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
});
