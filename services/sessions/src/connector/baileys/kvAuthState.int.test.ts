import { initAuthCreds, proto, type AuthenticationCreds, type SignalDataSet } from '@whiskeysockets/baileys';
import { BUCKETS, connectNats, type NatsHandle } from '@wagw/lib';
import { startTestNats, type TestNats } from '../../../../../test/harness/natsServer';
import { testLogger } from '../../../../../test/harness/logger';
import { AuthStateStore, isLinked } from './kvAuthState';
import { SENT_TTL_MS, SentMessageStore } from './sentStore';

const bytes = (n: number, fill: number): Buffer => Buffer.alloc(n, fill);

/** One value of each Signal key type, with ids as WhatsApp makes them (dots, '@', '::', '+', '/', '='). */
const everyKeyType = (): SignalDataSet => ({
  'pre-key': { '1': { public: bytes(32, 1), private: bytes(32, 2) } },
  session: { '15551234567.0': { _sessions: { base: { registrationId: 7, chain: bytes(16, 3) } }, version: 'v1' } as unknown as Uint8Array },
  'sender-key': { '120363000000000000@g.us::15551234567::0': [{ senderKeyId: 1, seed: bytes(32, 4) }] as unknown as Uint8Array },
  'sender-key-memory': { '120363000000000000@g.us': { '15551234567:3@s.whatsapp.net': true } },
  'app-state-sync-key': {
    'AAAAAFdo+/x=': proto.Message.AppStateSyncKeyData.fromObject({
      keyData: bytes(32, 5),
      fingerprint: { rawId: 9, currentIndex: 2 },
      timestamp: 1_700_000_000,
    }),
  },
  'app-state-sync-version': { regular_high: { version: 3, hash: bytes(128, 6), indexValueMap: { 'mac+/=': { valueMac: bytes(32, 7) } } } },
});

describe('Baileys auth state and sent messages in NATS KV', () => {
  let server: TestNats;
  let nats: NatsHandle;
  let store: AuthStateStore;

  beforeAll(async () => {
    server = await startTestNats();
    nats = await connectNats({ url: server.url, name: 'baileys-kv-test', logger: testLogger('baileys-kv') });
    store = await AuthStateStore.open(nats, testLogger('auth'));
  });
  afterAll(async () => {
    await nats.close();
    await server.dispose();
  });

  it('stores creds with their bytes, and reads them back as Buffers', async () => {
    const creds = initAuthCreds();
    const auth = store.state('CREDS1', creds);
    await auth.saveCreds();
    expect(await store.readCreds('CREDS1')).toEqual(creds);
    expect(Buffer.isBuffer((await store.readCreds('CREDS1'))?.noiseKey.private)).toBe(true);
    expect(await store.readCreds('NOBODY')).toBeNull();
  });

  it('saves the creds as Baileys changed them in place, and tells linked creds apart', async () => {
    const creds = initAuthCreds();
    const auth = store.state('CREDS2', creds);
    await auth.saveCreds();
    expect(isLinked((await store.readCreds('CREDS2'))!)).toBe(false);
    Object.assign(creds, { me: { id: '15551234567:12@s.whatsapp.net' }, account: { details: bytes(8, 1) } } satisfies Partial<AuthenticationCreds>);
    await auth.saveCreds();
    const read = await store.readCreds('CREDS2');
    expect(read?.me?.id).toBe('15551234567:12@s.whatsapp.net');
    expect(isLinked(read!)).toBe(true);
  });

  it('round-trips every key type, reviving app-state keys as protobuf objects', async () => {
    const { keys } = store.state('KEYS1', initAuthCreds()).state;
    const data = everyKeyType();
    await keys.set(data);
    for (const type of Object.keys(data) as Array<keyof SignalDataSet>) {
      const ids = Object.keys(data[type]!);
      expect(await keys.get(type, ids)).toEqual(data[type]);
    }
    const [syncKey] = Object.values(await keys.get('app-state-sync-key', ['AAAAAFdo+/x=']));
    expect(syncKey).toBeInstanceOf(proto.Message.AppStateSyncKeyData);
    expect(Buffer.from(syncKey!.keyData!)).toEqual(bytes(32, 5));
  });

  it('answers only the ids that exist, and deletes the ones set to null', async () => {
    const { keys } = store.state('KEYS2', initAuthCreds()).state;
    await keys.set({ 'pre-key': { '1': { public: bytes(32, 1), private: bytes(32, 2) }, '2': { public: bytes(32, 3), private: bytes(32, 4) } } });
    expect(Object.keys(await keys.get('pre-key', ['1', '2', '3']))).toEqual(['1', '2']);
    await keys.set({ 'pre-key': { '1': null, '4': { public: bytes(32, 5), private: bytes(32, 6) } } });
    expect(Object.keys(await keys.get('pre-key', ['1', '2', '3', '4'])).sort()).toEqual(['2', '4']);
  });

  it('keeps instances apart, and purges one without touching the other', async () => {
    const a = store.state('ISOA', initAuthCreds());
    const b = store.state('ISOB', initAuthCreds());
    await Promise.all([a.saveCreds(), b.saveCreds()]);
    await a.state.keys.set({ 'pre-key': { '1': { public: bytes(32, 1), private: bytes(32, 1) } }, ...everyKeyType() });
    await b.state.keys.set({ 'pre-key': { '1': { public: bytes(32, 9), private: bytes(32, 9) } } });
    expect((await b.state.keys.get('pre-key', ['1']))['1']?.public).toEqual(bytes(32, 9));

    await store.purge('ISOA');

    expect(await store.readCreds('ISOA')).toBeNull();
    expect(await a.state.keys.get('pre-key', ['1'])).toEqual({});
    expect(await a.state.keys.get('session', ['15551234567.0'])).toEqual({});
    expect(await store.readCreds('ISOB')).not.toBeNull();
    expect((await b.state.keys.get('pre-key', ['1']))['1']?.public).toEqual(bytes(32, 9));
  });

  it('names keys <instance>.creds and <instance>.<type>.<base64url(id)> in the wa_auth bucket', async () => {
    await store.state('NAMES', initAuthCreds()).state.keys.set({ 'sender-key-memory': { 'x@g.us': { a: true } } });
    await store.state('NAMES', initAuthCreds()).saveCreds();
    const kv = await nats.kvm.open(BUCKETS.waAuth);
    const keys: string[] = [];
    for await (const key of await kv.keys('NAMES.>')) keys.push(key);
    expect(keys.sort()).toEqual(['NAMES.creds', `NAMES.sender-key-memory.${Buffer.from('x@g.us').toString('base64url')}`]);
  });

  describe('sent messages', () => {
    let sent: SentMessageStore;
    beforeAll(async () => {
      sent = await SentMessageStore.open(nats);
    });

    it('keeps what was sent under its WhatsApp id, with our message id, for a day', async () => {
      const message = proto.Message.fromObject({ extendedTextMessage: { text: 'hello' }, messageContextInfo: { messageSecret: bytes(32, 8) } });
      await sent.put('SENT1', '3EB0ABCDEF0123456789AB', { messageId: 'm-1', message });
      const record = await sent.get('SENT1', '3EB0ABCDEF0123456789AB');
      expect(record?.messageId).toBe('m-1');
      expect(record?.message?.extendedTextMessage?.text).toBe('hello');
      expect(Buffer.from(record!.message!.messageContextInfo!.messageSecret!)).toEqual(bytes(32, 8));
      expect(await sent.get('SENT1', 'unknown')).toBeNull();
      expect((await (await nats.kvm.open(BUCKETS.waSent)).status()).ttl).toBe(SENT_TTL_MS);
    });

    it("erases the content of the sends stored before the erasure's time (NATS's write times), not of later ones", async () => {
      await sent.put('SENTE', 'BEFORE', { messageId: 'b', message: proto.Message.fromObject({ conversation: 'before' }) });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const erasedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await sent.put('SENTE', 'AFTER', { messageId: 'a', message: proto.Message.fromObject({ conversation: 'after' }) });
      await sent.forgetContent('SENTE', erasedAt);
      expect(await sent.get('SENTE', 'BEFORE')).toEqual({ messageId: 'b', message: null });
      expect((await sent.get('SENTE', 'AFTER'))?.message?.conversation).toBe('after');
    });

    it('purges one instance only', async () => {
      await sent.put('SENTA', 'id/with+odd=chars', { messageId: 'a', message: null });
      await sent.put('SENTB', 'id/with+odd=chars', { messageId: 'b', message: null });
      await sent.purge('SENTA');
      expect(await sent.get('SENTA', 'id/with+odd=chars')).toBeNull();
      expect(await sent.get('SENTB', 'id/with+odd=chars')).toEqual({ messageId: 'b', message: null });
    });
  });
});
