import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { testLogger } from '../../../test/harness/logger';
import { startTestNats, type TestNats } from '../../../test/harness/natsServer';
import { JetStreamEventStore, SealedEventStore } from '../eventStore';
import { messageEvent, messageStream, type MessageAccepted } from '../events';
import { BUCKETS, connectNats, type NatsHandle } from '../nats';
import { ContentKeys } from './contentKeys';
import { KvKeyBucket } from './kvKeyBucket';

const SECRET = 'a caption nobody may read back';

/** Every file of the server's store, as one text (bounded: the test's own small store). */
const storeText = (dir: string): string =>
  readdirSync(dir)
    .map((name) => join(dir, name))
    .map((path) => (statSync(path).isDirectory() ? storeText(path) : readFileSync(path).toString('latin1')))
    .join('\n');

const until = async (condition: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> => {
  for (const deadline = Date.now() + ms; !(await condition());) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('sealed content on a real nats-server', () => {
  let nats: TestNats;
  let handles: NatsHandle[];
  let keys: ContentKeys[];

  beforeAll(async () => {
    nats = await startTestNats();
    handles = await Promise.all([1, 2].map((n) => connectNats({ url: nats.url, name: `sealing-${n}`, logger: testLogger() })));
    keys = await Promise.all(handles.map(async (handle) => new ContentKeys(await KvKeyBucket.open(handle))));
    await Promise.all(keys.map((k) => k.start()));
  });

  afterAll(async () => {
    keys.forEach((k) => k.stop());
    await Promise.all(handles.map((handle) => handle.close()));
    await nats.dispose();
  });

  it("two processes racing for an instance's first key both use the one stored first", async () => {
    const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => keys[i % 2]!.current('RACE1')));
    expect(new Set(raced.map((k) => k.kid)).size).toBe(1);
  });

  it('JetStream stores the content only as ciphertext; readers get it back; after erasure no revision of the key is left', async () => {
    const store = new SealedEventStore(await JetStreamEventStore.open(handles[0]!), keys[0]!);
    const reader = new SealedEventStore(await JetStreamEventStore.open(handles[1]!), keys[1]!);
    const accepted = messageEvent<MessageAccepted>('MessageAccepted', new Date().toISOString(), {
      message_id: 'mINT1',
      to: '4915112345678',
      type: 'text',
      text: SECRET,
      media_url: null,
      filename: null,
    });
    await store.append(messageStream('SEAL1', 'mINT1'), [accepted], { expectedVersion: 0, commandId: 'seal-1' });

    // The stored message as JetStream holds it, and the server's files once they hold it.
    const raw = await handles[0]!.jsm.streams.getMessage('EVENTS', { last_by_subj: 'events.SEAL1.message.mINT1' });
    expect(raw?.string()).toContain('mINT1');
    expect(raw?.string()).not.toContain(SECRET);
    await until(() => storeText(nats.storeDir).includes('mINT1'));
    expect(storeText(nats.storeDir)).not.toContain(SECRET);
    expect((await reader.readStream(messageStream('SEAL1', 'mINT1')))[0]!.events[0]!.data).toMatchObject({ text: SECRET });

    const key = (await keys[0]!.current('SEAL1')).key.toString('base64');
    expect(await keys[0]!.destroy('SEAL1')).toBe(true);
    const bucket = `KV_${BUCKETS.contentKeys}`;
    const left = await handles[0]!.jsm.streams.getMessage(bucket, { last_by_subj: `$KV.${BUCKETS.contentKeys}.SEAL1` });
    expect(left?.header.get('KV-Operation')).toBe('PURGE');
    expect(left?.string() ?? '').not.toContain(key);
    // The purge marker is all the bucket holds of that key: no earlier revision.
    const info = await handles[0]!.jsm.streams.info(bucket, { subjects_filter: `$KV.${BUCKETS.contentKeys}.SEAL1` });
    expect(info.state.subjects?.[`$KV.${BUCKETS.contentKeys}.SEAL1`]).toBe(1);

    const sealedKid = (JSON.parse(raw!.string()) as { events: Array<{ data: { $sealed: { kid: string } } }> }).events[0]!.data.$sealed.kid;
    // The other process learns of it through its watch; both read the event erased, and the log is unchanged.
    await until(() => keys[1]!.known('SEAL1', sealedKid) === null);
    expect((await reader.readStream(messageStream('SEAL1', 'mINT1')))[0]!.events[0]!.data).toMatchObject({ text: null, erased: true, to: '4915112345678' });
    const after = await handles[0]!.jsm.streams.getMessage('EVENTS', { last_by_subj: 'events.SEAL1.message.mINT1' });
    expect(after?.string()).toBe(raw?.string());

    // A new key takes the destroyed one's place (KV create over the purge marker).
    const fresh = await keys[1]!.current('SEAL1');
    expect(fresh.key.toString('base64')).not.toBe(key);
  });
});
