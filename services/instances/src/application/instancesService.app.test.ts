import {
  assertPublicUrl,
  ContentKeys,
  InMemoryEventStore,
  InMemoryKeyBucket,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  messageEvent,
  messageStream,
  InMemoryWebhookSecretStore,
  StoreSpecification,
  type GivenCommit,
  type InstanceEvent,
} from '@wagw/lib';
import { instancesOn } from '../../../../test/harness/instancesService';
import { testLogger } from '../../../../test/harness/logger';
import { InstanceDirectory } from './instanceDirectory';
import { InstancesService } from './instancesService';

// Application tests: the real service, decider and read model on the in-memory store; no NATS, no gRPC.

const NOW = '2026-11-22T10:00:00.000Z';
const ID = instanceIdFor('acme', 'create-1');
const OTHER_ID = instanceIdFor('acme', 'create-2');

/** The instance's own stream, holding what other services and earlier commands already stored. */
const instance = (id: string, ...events: InstanceEvent[]): GivenCommit => ({ stream: instanceStream(id), events });
const created = (id = ID, account = 'acme') => instanceEvent('InstanceCreated', NOW, { instance_id: id, account });

describe('InstancesService (application, in-memory store)', () => {
  let store: InMemoryEventStore;
  let directory: InstanceDirectory;
  let service: InstancesService;
  let given: ReturnType<typeof StoreSpecification.for>;

  beforeEach(() => {
    store = new InMemoryEventStore();
    // The production SSRF guard, with DNS answered from a table so the test stays offline.
    const dns: Record<string, string[]> = { 'hooks.example': ['93.184.216.34'], 'intranet.example': ['10.0.0.7'] };
    ({ service, directory } = instancesOn(store, {
      checkWebhookUrl: (url) => assertPublicUrl(url, { allowPrivate: false, resolve: async (host) => dns[host] ?? [] }),
      now: () => new Date(NOW),
    }));
    given = StoreSpecification.for(store);
  });

  afterEach(async () => {
    service.close();
    await directory.stop();
  });

  describe('create', () => {
    it('refuses a new instance over the account quota (409 instance_quota_reached), but not a retried create or another account', async () => {
      const limited = new InstancesService({
        store,
        secrets: new InMemoryWebhookSecretStore(),
        directory,
        keys: new ContentKeys(new InMemoryKeyBucket()),
        checkWebhookUrl: async () => undefined,
        instanceQuota: 2,
        now: () => new Date(NOW),
      });
      await given(instance(ID, created()), instance(OTHER_ID, created(OTHER_ID)))
        .when(async () => {
          await directory.catchUp(1_000);
          return limited.create('acme', 'create-3');
        })
        .thenThrows({ kind: 'conflict', code: 'instance_quota_reached' });
      const { answer } = await given()
        .when(async () => [(await limited.create('acme', 'create-1')).instance.instanceId, (await limited.create('other', 'o-1')).instance.account])
        .then({ commits: [instance(instanceIdFor('other', 'o-1'), created(instanceIdFor('other', 'o-1'), 'other'))] });
      expect(answer).toEqual([ID, 'other']);
      expect(limited.instanceUsage('acme')).toEqual({ used: 2, max: 2 });
    });

    it('creates an instance whose id derives from the account and the command id', async () => {
      await given()
        .when(() => service.create('acme', 'create-1'))
        .then({
          commits: [instance(ID, created())],
          answer: {
            instance: {
              exists: true,
              instanceId: ID,
              account: 'acme',
              createdAt: NOW,
              lifecycle: 'created',
              since: NOW,
              webhook: null,
              linkedNumber: null,
              lastDisconnectReason: null,
              resets: 0,
              restriction: null,
              dataErasedAt: null,
            },
            version: 1,
          },
        });
    });

    it('is idempotent per command id: a retry answers the same instance and appends nothing more', async () => {
      const { answer } = await given()
        .when(async () => [await service.create('acme', 'create-1'), await service.create('acme', 'create-1')])
        .then({ commits: [instance(ID, created())] });
      expect(answer[1]).toEqual(answer[0]);
    });

    it('answers the stored instance to a retry reaching a replica that never saw the first create', async () => {
      const { answer } = await given(instance(ID, created()))
        .when(() => service.create('acme', 'create-1'))
        .then({ commits: [] });
      expect(answer).toMatchObject({ instance: { instanceId: ID, account: 'acme' }, version: 1 });
    });

    it('creates a second instance for another command id', async () => {
      await given(instance(ID, created()))
        .when(() => service.create('acme', 'create-2'))
        .then({ commits: [instance(OTHER_ID, created(OTHER_ID))] });
    });

    it('refuses a create without a command id', async () => {
      await given()
        .when(() => service.create('acme', ''))
        .thenThrows({ kind: 'invalid_argument', code: 'invalid_command_id' });
    });
  });

  describe('set_webhook', () => {
    it('records the URL and answers the signing secret, the same one on every call', async () => {
      const { answer } = await given(instance(ID, created()))
        .when(async () => [
          await service.setWebhook('acme', ID, 'https://hooks.example/a', true, 'hook-1'),
          await service.setWebhook('acme', ID, 'https://hooks.example/b', true, 'hook-2'),
        ])
        .then({
          commits: [
            instance(ID, instanceEvent('WebhookConfigured', NOW, { url: 'https://hooks.example/a', enabled: true })),
            instance(ID, instanceEvent('WebhookConfigured', NOW, { url: 'https://hooks.example/b', enabled: true })),
          ],
        });
      expect(answer[0]!.signingSecret).toMatch(/^whsec_/);
      expect(answer[1]!.signingSecret).toBe(answer[0]!.signingSecret);
      expect(answer[1]!.instance.webhook).toEqual({ url: 'https://hooks.example/b', enabled: true, events: [] });
    });

    it('records an event filter in the documented order and shows it in the status; an unknown type is a 400', async () => {
      const { answer } = await given(instance(ID, created()))
        .when(async () => {
          await service.setWebhook('acme', ID, 'https://hooks.example/a', true, 'hook-1', ['message.failed', 'message.received', 'message.failed']);
          return service.get('acme', ID);
        })
        .then({
          commits: [
            instance(
              ID,
              instanceEvent('WebhookConfigured', NOW, { url: 'https://hooks.example/a', enabled: true, events: ['message.received', 'message.failed'] }),
            ),
          ],
        });
      expect(answer.instance.webhook).toEqual({ url: 'https://hooks.example/a', enabled: true, events: ['message.received', 'message.failed'] });
      await given(instance(ID, created()))
        .when(() => service.setWebhook('acme', ID, 'https://hooks.example/a', true, 'hook-1', ['message.recieved']))
        .thenThrows({ kind: 'invalid_argument', code: 'invalid_events' });
    });

    it("answers 404 for another account's instance and stores nothing", async () => {
      await given(instance(ID, created()))
        .when(() => service.setWebhook('other', ID, 'https://hooks.example/a', true, 'hook-1'))
        .thenThrows({ kind: 'not_found', code: 'instance_not_found' });
    });

    it('answers 404 for an instance that does not exist', async () => {
      await given()
        .when(() => service.setWebhook('acme', ID, 'https://hooks.example/a', true, 'hook-1'))
        .thenThrows({ kind: 'not_found', code: 'instance_not_found' });
    });

    it('refuses a URL that resolves to a private address (SSRF guard)', async () => {
      await given(instance(ID, created()))
        .when(() => service.setWebhook('acme', ID, 'https://intranet.example/hook', true, 'hook-1'))
        .thenThrows({ kind: 'invalid_argument', code: 'webhook_url_forbidden' });
    });

    it('refuses a URL with credentials in it', async () => {
      await given(instance(ID, created()))
        .when(() => service.setWebhook('acme', ID, 'https://user:pw@hooks.example/a', true, 'hook-1'))
        .thenThrows({ kind: 'invalid_argument', code: 'invalid_webhook_url' });
    });
  });

  describe('reset', () => {
    it('returns a linked instance to created, forgetting its number and keeping its webhook', async () => {
      const { answer } = await given(
        instance(ID, created(), instanceEvent('WebhookConfigured', NOW, { url: 'https://hooks.example/a', enabled: true })),
        instance(ID, instanceEvent('InstanceLinked', NOW, { number: '4915112345678' }), instanceEvent('InstanceConnected', NOW, {})),
      )
        .when(() => service.reset('acme', ID, 'reset-1'))
        .then({ commits: [instance(ID, instanceEvent('InstanceReset', NOW, {}))] });
      expect(answer).toMatchObject({
        instance: { lifecycle: 'created', linkedNumber: null, webhook: { url: 'https://hooks.example/a', enabled: true } },
        version: 3,
      });
    });

    it('appends one reset for a retried reset command', async () => {
      await given(instance(ID, created()))
        .when(async () => [await service.reset('acme', ID, 'reset-1'), await service.reset('acme', ID, 'reset-1')])
        .then({ commits: [instance(ID, instanceEvent('InstanceReset', NOW, {}))] });
    });

    it("answers 404 for another account's instance", async () => {
      await given(instance(ID, created()))
        .when(() => service.reset('other', ID, 'reset-1'))
        .thenThrows({ kind: 'not_found', code: 'instance_not_found' });
    });

    it('refuses an id that is not an instance id', async () => {
      await given()
        .when(() => service.reset('acme', 'not-an-id', 'reset-1'))
        .thenThrows({ kind: 'invalid_argument', code: 'invalid_instance_id' });
    });
  });

  describe('history', () => {
    const sent = (n: number): GivenCommit => ({
      stream: messageStream(ID, `m${n}`),
      events: [messageEvent('MessageSent', NOW, { message_id: `m${n}`, to: '4915112345678' })],
    });
    // Sequences: 1 created, 2 the other instance (never in this history), 3-5 three messages.
    const history = [instance(ID, created()), instance(OTHER_ID, created(OTHER_ID)), sent(1), sent(2), sent(3)];

    /** Follows the cursor the way a client does, to the end; the cursor's values are the service's business. */
    const allPages = async (limit: number) => {
      const pages = [];
      for (let cursor: number | null = 1; cursor !== null && pages.length < 10;) {
        const page = await service.history('acme', ID, cursor, limit);
        pages.push(page);
        cursor = page.nextSequence;
      }
      return pages;
    };

    it("pages through the instance's own stream and its messages', oldest first, skipping other instances", async () => {
      const { answer: pages } = await given(...history)
        .when(() => allPages(2))
        .then({ commits: [] });
      expect(pages.flatMap((p) => p.events.map((e) => [e.sequence, e.stream, e.type]))).toEqual([
        [1, instanceStream(ID), 'InstanceCreated'],
        [3, messageStream(ID, 'm1'), 'MessageSent'],
        [4, messageStream(ID, 'm2'), 'MessageSent'],
        [5, messageStream(ID, 'm3'), 'MessageSent'],
      ]);
      expect(pages.map((p) => p.events.length)).toEqual([2, 2]);
    });

    it('reads at least one commit a page when asked for none', async () => {
      const { answer: pages } = await given(...history)
        .when(() => allPages(0))
        .then({ commits: [] });
      expect(pages.map((p) => p.events.map((e) => e.sequence))).toEqual([[1], [3], [4], [5]]);
    });

    it('goes on to commits appended between two pages (the scan kept open for the next page does not end early)', async () => {
      const { answer: first } = await given(...history)
        .when(() => service.history('acme', ID, 1, 3))
        .then({ commits: [] });
      expect(first.events.map((e) => e.sequence)).toEqual([1, 3, 4]);
      await store.append(messageStream(ID, 'm4'), sent(4).events, { expectedVersion: 0, commandId: 'late' });
      const second = await service.history('acme', ID, first.nextSequence!, 3);
      expect(second.events.map((e) => e.stream)).toEqual([messageStream(ID, 'm3'), messageStream(ID, 'm4')]);
      expect(second.nextSequence).toBeNull();
      // A page asked for again (a client retrying) is read anew, not taken from a scan that already moved on.
      expect((await service.history('acme', ID, first.nextSequence!, 3)).events).toHaveLength(2);
    });

    it("answers 404 for another account's instance", async () => {
      await given(...history)
        .when(() => service.history('other', ID, 1, 10))
        .thenThrows({ kind: 'not_found', code: 'instance_not_found' });
    });
  });

  describe('list', () => {
    it("lists the account's instances from the read model, oldest first", async () => {
      const { answer } = await given(
        instance(OTHER_ID, created(OTHER_ID)),
        instance(ID, created()),
        instance(instanceIdFor('other', 'x'), created(instanceIdFor('other', 'x'), 'other')),
      )
        .when(() => service.list('acme'))
        .then({ commits: [] });
      // Same creation time: the id breaks the tie.
      expect(answer.items.map((i) => i.instanceId)).toEqual([ID, OTHER_ID].sort());
      expect(answer.nextCursor).toBeNull();
    });

    it('pages with a cursor and a limit: every instance once, in order, then a null cursor', async () => {
      const ids = [1, 2, 3, 4, 5].map((n) => instanceIdFor('acme', `c-${n}`));
      const { answer } = await given(...ids.map((id) => instance(id, created(id))))
        .when(async () => {
          const seen: string[] = [];
          let cursor = '';
          for (let page = 0; page < 10; page++) {
            const { items, nextCursor } = await service.list('acme', cursor, 2);
            seen.push(...items.map((i) => i.instanceId));
            if (!nextCursor) break;
            cursor = nextCursor;
          }
          return seen;
        })
        .then({ commits: [] });
      expect(answer).toEqual([...ids].sort());
    });

    it('answers 503 instance_state_catching_up, not a list missing instances, while the read model cannot catch up', async () => {
      // A directory that never folds (its subscription cannot start: NATS electing a leader after a node died, say).
      const behind = instancesOn(store, {}, new InstanceDirectory(store, testLogger()));
      await given(instance(ID, created()))
        .when(() => behind.service.list('acme'))
        .thenThrows({ kind: 'unavailable', code: 'instance_state_catching_up' });
      behind.service.close();
    });

    it("refuses a cursor that is not one of the account's instances (400 invalid_cursor)", async () => {
      await given(instance(ID, created()), instance(instanceIdFor('other', 'x'), created(instanceIdFor('other', 'x'), 'other')))
        .when(() => service.list('acme', instanceIdFor('other', 'x'), 10))
        .thenThrows({ kind: 'invalid_argument', code: 'invalid_cursor' });
    });
  });
});
