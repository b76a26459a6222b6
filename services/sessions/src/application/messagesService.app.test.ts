import {
  assertPublicUrl,
  ContentKeys,
  InMemoryEventStore,
  InMemoryKeyBucket,
  SealedEventStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  messageStream,
  StoreSpecification,
  type ExpectedCommit,
  type GivenCommit,
  type InstanceEvent,
} from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { InstanceRegistry } from '../registry/instanceRegistry';
import { MessagesService, type SendCommand } from './messagesService';

// Application tests of accepting a send: the real service and instance registry on the in-memory store; no NATS,
// no gRPC, no connector (dispatch happens later, from the send ledger).

const NOW = '2026-11-22T10:00:00.000Z';
const ID = instanceIdFor('acme', 'create-1');
const NUMBER = '4915112345678';

const instance = (...events: InstanceEvent[]): GivenCommit => ({ stream: instanceStream(ID), events });
const created = instanceEvent('InstanceCreated', NOW, { instance_id: ID, account: 'acme' });
const linked = instanceEvent('InstanceLinked', NOW, { number: NUMBER });
const connected = instanceEvent('InstanceConnected', NOW, {});

const send = (changes: Partial<SendCommand> = {}): SendCommand => ({
  account: 'acme',
  instanceId: ID,
  to: '4917612345678',
  type: 'text',
  text: 'hello',
  mediaUrl: '',
  filename: '',
  idempotencyKey: '',
  groupId: '',
  quotedMessageId: '',
  location: null,
  vcard: '',
  reactionMessageId: '',
  emoji: '',
  voiceNote: false,
  ...changes,
});

/** The one commit an accepted send appends: MessageAccepted on the message's own stream. */
const accepted = (messageId: string, data: Partial<Record<string, unknown>> = {}): ExpectedCommit => ({
  stream: messageStream(ID, messageId),
  events: [
    {
      type: 'MessageAccepted',
      data: { message_id: messageId, to: '4917612345678', type: 'text', text: 'hello', media_url: null, filename: null, ...data },
    },
  ],
});

describe('MessagesService.accept (application, in-memory store)', () => {
  let store: InMemoryEventStore;
  let registry: InstanceRegistry;
  let service: MessagesService;
  let given: ReturnType<typeof StoreSpecification.for>;

  beforeEach(() => {
    store = new InMemoryEventStore();
    registry = new InstanceRegistry(store, testLogger());
    registry.start();
    // The production SSRF guard for media URLs, with DNS answered from a table so the test stays offline.
    const dns: Record<string, string[]> = { 'cdn.example': ['93.184.216.34'], 'intranet.example': ['10.0.0.7'] };
    service = new MessagesService(store, registry, (url) =>
      assertPublicUrl(url, { allowPrivate: false, field: 'media_url', resolve: async (host) => dns[host] ?? [] }),
    );
    given = StoreSpecification.for(store);
  });

  afterEach(() => registry.stop());

  describe('a linked instance', () => {
    it('accepts a text and stores MessageAccepted before answering its message id', async () => {
      // Linked a moment ago: the registry is confirmed against the instance's stream, so the send is not refused.
      const { answer } = await given(instance(created), instance(linked, connected))
        .when(() => service.accept(send()))
        .then((messageId) => ({ commits: [accepted(messageId)] }));
      expect(answer).toMatch(/^m_[0-9a-f]+$/);
    });

    it('accepts a text of 3,000 emoji: 3,000 characters, as the API counts them, though 6,000 UTF-16 units', async () => {
      await given(instance(created, linked, connected))
        .when(() => service.accept(send({ text: '😀'.repeat(3_000) })))
        .then((messageId) => ({ commits: [accepted(messageId, { text: '😀'.repeat(3_000) })] }));
    });

    it('accepts while disconnected: the message waits for the connection to come back', async () => {
      await given(instance(created, linked, connected), instance(instanceEvent('InstanceDisconnected', NOW, { reason: 'connection_lost', reconnecting: true })))
        .when(() => service.accept(send()))
        .then((messageId) => ({ commits: [accepted(messageId)] }));
    });

    it('accepts media from a public URL, with its file name', async () => {
      await given(instance(created, linked))
        .when(() => service.accept(send({ type: 'media', text: '', mediaUrl: 'https://cdn.example/a.pdf', filename: 'a.pdf' })))
        .then((messageId) => ({ commits: [accepted(messageId, { type: 'media', text: null, media_url: 'https://cdn.example/a.pdf', filename: 'a.pdf' })] }));
    });
  });

  describe('idempotency key', () => {
    it('answers the same message id to a repeated key and stores the message once', async () => {
      const { answer } = await given(instance(created, linked))
        .when(async () => [await service.accept(send({ idempotencyKey: 'k1' })), await service.accept(send({ idempotencyKey: 'k1' }))])
        .then(([first]) => ({ commits: [accepted(first!)] }));
      expect(answer[1]).toBe(answer[0]);
    });

    it('answers 503 (retry), not a server error, to a repeated key whose stored send reads back empty for a moment', async () => {
      const { answer } = await given(instance(created, linked))
        .when(async () => {
          const first = await service.accept(send({ idempotencyKey: 'k1' }));
          // A read behind the write: the store refuses the second append (the stream holds the send) but reads nothing.
          const lagging = jest.spyOn(store, 'readStream').mockResolvedValue([]);
          const again = await service.accept(send({ idempotencyKey: 'k1' })).then(
            () => null,
            (error: unknown) => error,
          );
          lagging.mockRestore();
          return { first, again, retried: await service.accept(send({ idempotencyKey: 'k1' })) };
        })
        .then(({ first }) => ({ commits: [accepted(first)] }));
      expect(answer.again).toMatchObject({ kind: 'unavailable', code: 'event_store_unavailable' });
      expect(answer.retried).toBe(answer.first);
    });

    it.each([
      ['another text', { text: 'changed' }],
      ['another number', { to: '4917699999999' }],
      ['another type', { type: 'location', text: '', location: { latitude: 1, longitude: 2, name: null } }],
    ])('refuses a key reused for %s (409 idempotency_key_reused): the first message stays, the other is not taken', async (_name, changes) => {
      const { answer } = await given(instance(created, linked))
        .when(async () => {
          const first = await service.accept(send({ idempotencyKey: 'k1' }));
          const again = await service.accept(send({ idempotencyKey: 'k1', ...changes })).then(
            () => null,
            (error: unknown) => error,
          );
          return { first, again };
        })
        .then(({ first }) => ({ commits: [accepted(first)] }));
      expect(answer.again).toMatchObject({ kind: 'conflict', code: 'idempotency_key_reused' });
    });

    it('refuses a key used before the instance was erased (409): the send it named cannot be compared, nor go out', async () => {
      const keys = new ContentKeys(new InMemoryKeyBucket());
      const sealed = new SealedEventStore(new InMemoryEventStore(), keys);
      const sealedRegistry = new InstanceRegistry(sealed, testLogger());
      sealedRegistry.start();
      try {
        await sealed.append(instanceStream(ID), [created, linked], { expectedVersion: 0, commandId: 'link' });
        await sealedRegistry.catchUp(1_000);
        const onSealed = new MessagesService(sealed, sealedRegistry, async () => undefined);
        await onSealed.accept(send({ idempotencyKey: 'k1' }));
        await keys.destroy(ID);
        await expect(onSealed.accept(send({ idempotencyKey: 'k1', text: 'a new message' }))).rejects.toMatchObject({ code: 'idempotency_key_reused' });
      } finally {
        await sealedRegistry.stop();
      }
    });

    it('stores two messages for two keys, and for two sends without a key', async () => {
      const { answer } = await given(instance(created, linked))
        .when(async () => [
          await service.accept(send({ idempotencyKey: 'k1' })),
          await service.accept(send({ idempotencyKey: 'k2' })),
          await service.accept(send()),
          await service.accept(send()),
        ])
        .then((ids) => ({ commits: ids.map((id) => accepted(id)) }));
      expect(new Set(answer).size).toBe(4);
    });
  });

  describe('an instance that cannot send', () => {
    // A refusal is only as current as the registry: a logout it has not applied yet is accepted and then failed in
    // dispatch (see MessagesService.accept). These cases are about the settled state, so the registry catches up first.
    const settled = async (command: SendCommand): Promise<string> => {
      await registry.catchUp(1_000);
      return service.accept(command);
    };

    it('answers 409 not_linked before any QR code was scanned', async () => {
      await given(instance(created, instanceEvent('InstanceConnecting', NOW, {}), instanceEvent('InstanceQrIssued', NOW, {})))
        .when(() => settled(send()))
        .thenThrows({ kind: 'conflict', code: 'not_linked' });
    });

    it('answers 409 instance_logged_out_on_phone once the phone logged the device out', async () => {
      await given(instance(created, linked, connected), instance(instanceEvent('InstanceLoggedOut', NOW, { reason: 'logged_out_on_phone' })))
        .when(() => settled(send()))
        .thenThrows({ kind: 'conflict', code: 'instance_logged_out_on_phone' });
    });

    it('answers 409 with the failure reason once the platform refused the device, and says what can be done (not a QR scan)', async () => {
      const error = await given(instance(created, linked), instance(instanceEvent('InstanceFailed', NOW, { reason: 'client_outdated' })))
        .when(() => settled(send()))
        .thenThrows({ kind: 'conflict', code: 'instance_client_outdated' });
      expect(error.message).toMatch(/reconnect.*reset_instance/);
    });

    it('answers 409 not_linked after a reset, until a new QR code is scanned', async () => {
      await given(instance(created, linked, connected), instance(instanceEvent('InstanceReset', NOW, {})))
        .when(() => settled(send()))
        .thenThrows({ kind: 'conflict', code: 'not_linked' });
    });

    it('accepts again once linked anew after a logout', async () => {
      await given(instance(created, linked), instance(instanceEvent('InstanceLoggedOut', NOW, { reason: 'logged_out_on_phone' })), instance(linked, connected))
        .when(() => settled(send()))
        .then((messageId) => ({ commits: [accepted(messageId)] }));
    });

    it('answers 503 (retry) rather than refusing when this replica cannot catch up with the instance in time', async () => {
      // A registry that does not follow the log (NATS electing a leader, a replica starting): the instance exists and
      // is linked, but this replica cannot tell within 2 s. A 404 here dropped good sends in the cluster drill.
      const behind = new InstanceRegistry(store, testLogger());
      const stalled = new MessagesService(store, behind, async () => undefined);
      await given(instance(created, linked, connected))
        .when(() => stalled.accept(send()))
        .thenThrows({ kind: 'unavailable', code: 'instance_state_catching_up' });
    });

    it("answers 404 for another account's instance and for an unknown one", async () => {
      await given(instance(created, linked))
        .when(() => settled(send({ account: 'other' })))
        .thenThrows({ kind: 'not_found', code: 'instance_not_found' });
      await given()
        .when(() => settled(send({ instanceId: instanceIdFor('acme', 'never') })))
        .thenThrows({ kind: 'not_found', code: 'instance_not_found' });
    });
  });

  describe('invalid input (400, nothing stored)', () => {
    const cases: Array<[string, Partial<SendCommand>, string]> = [
      ['a number with a plus sign', { to: '+4917612345678' }, 'invalid_number'],
      ['a number with separators', { to: '49 176 1234567' }, 'invalid_number'],
      ['a number too short', { to: '123456' }, 'invalid_number'],
      ['an unknown type', { type: 'sticker' }, 'invalid_type'],
      ['an empty text', { text: '   ' }, 'missing_message'],
      ['a text over the limit', { text: 'x'.repeat(4_097) }, 'message_too_long'],
      ['media without a URL', { type: 'media', text: '' }, 'invalid_media_url'],
      ['media over ftp', { type: 'media', mediaUrl: 'ftp://cdn.example/a.pdf' }, 'invalid_media_url'],
      ['media with a password in its URL', { type: 'media', mediaUrl: 'https://user:s3cret@cdn.example/a.pdf' }, 'invalid_media_url'],
      ['media with a line break in its URL', { type: 'media', mediaUrl: 'https://cdn.example/a\r\n.pdf' }, 'invalid_media_url'],
      ['media on a private address', { type: 'media', mediaUrl: 'https://intranet.example/a.pdf' }, 'media_url_forbidden'],
      ['an id that is not an instance id', { instanceId: 'nope' }, 'invalid_instance_id'],
    ];
    it.each(cases)('refuses %s', async (_name, changes, code) => {
      await given(instance(created, linked))
        .when(() => service.accept(send(changes)))
        .thenThrows({ kind: 'invalid_argument', code });
    });
  });
});
