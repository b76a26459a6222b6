import { ContentKeys, InMemoryKeyBucket } from '../contentKeys';
import { messageEvent, messageStream, type MessageAccepted, type MessageReceived, type MessageSent } from '../events';
import { InMemoryEventStore } from './inMemoryEventStore';
import type { Commit } from './port';
import { SealedEventStore } from './sealedEventStore';
import { describeEventStoreContract } from '../../../test/contract/eventStore.contract';

const AT = '2026-11-24T01:00:00.000Z';
const stream = messageStream('I1', 'm1');
const accepted = messageEvent<MessageAccepted>('MessageAccepted', AT, {
  message_id: 'm1',
  to: '4915112345678',
  type: 'media',
  text: 'the secret caption',
  media_url: 'https://media.example/secret.jpg',
  filename: 'secret.jpg',
});
const sent = messageEvent<MessageSent>('MessageSent', AT, { message_id: 'm1', to: '4915112345678' });
const received = messageEvent<MessageReceived>('MessageReceived', AT, {
  message_id: 'in1',
  from: '4915100000000',
  push_name: 'Secret Name',
  text: null,
  media: { mimetype: 'application/pdf', filename: 'secret.pdf', size: 42 },
  timestamp: AT,
});

const dataOf = (commits: Commit[]): unknown[] => commits.flatMap((c) => c.events.map((e) => e.data));

describe('SealedEventStore', () => {
  let inner: InMemoryEventStore;
  let keys: ContentKeys;
  let store: SealedEventStore;

  beforeEach(async () => {
    inner = new InMemoryEventStore();
    keys = new ContentKeys(new InMemoryKeyBucket());
    store = new SealedEventStore(inner, keys);
    await store.append(stream, [accepted], { expectedVersion: 0, commandId: 'a' });
    await store.append(stream, [sent], { expectedVersion: 1, commandId: 's' });
    await store.append(messageStream('I1', 'in1'), [received], { expectedVersion: 0, commandId: 'r' });
  });

  it('stores content fields sealed: the log holds no plaintext, the rest stays readable', async () => {
    const raw = JSON.stringify(await inner.readPattern('I1.>', 1, 100));
    for (const secret of ['secret caption', 'secret.jpg', 'Secret Name', 'secret.pdf']) expect(raw).not.toContain(secret);
    const [storedAccepted, , storedReceived] = dataOf((await inner.readPattern('I1.>', 1, 100)).commits) as Array<Record<string, unknown>>;
    expect(storedAccepted).toMatchObject({ message_id: 'm1', to: '4915112345678', type: 'media', $sealed: expect.any(Object) });
    // The field's name stays (as null), its value only in the sealed part.
    expect(storedAccepted).toHaveProperty('text', null);
    expect(storedReceived).toMatchObject({ from: '4915100000000', media: { mimetype: 'application/pdf', size: 42 } });
  });

  it("seals a location's coordinates and name: after the key is destroyed they read null", async () => {
    const place = messageEvent<MessageAccepted>('MessageAccepted', AT, {
      message_id: 'm2',
      to: '4915112345678',
      type: 'location',
      text: null,
      media_url: null,
      filename: null,
      location: { latitude: 52.516275, longitude: 13.377704, name: 'Brandenburg Gate' },
    });
    await store.append(messageStream('I1', 'm2'), [place], { expectedVersion: 0, commandId: 'p' });
    const raw = JSON.stringify(await inner.readStream(messageStream('I1', 'm2')));
    for (const secret of ['52.516275', '13.377704', 'Brandenburg']) expect(raw).not.toContain(secret);
    expect(dataOf(await store.readStream(messageStream('I1', 'm2')))).toEqual([place.data]);
    await keys.destroy('I1');
    expect(dataOf(await store.readStream(messageStream('I1', 'm2')))[0]).toMatchObject({
      type: 'location',
      location: { latitude: null, longitude: null, name: null },
      erased: true,
    });
  });

  it('reads plaintext back through every read', async () => {
    const expected = [accepted.data, sent.data, received.data];
    expect(dataOf((await store.readPattern('I1.>', 1, 100)).commits)).toEqual(expected);
    expect(dataOf(await store.readStream(stream))).toEqual([accepted.data, sent.data]);
    const scanned: Commit[] = [];
    for await (const commit of store.scanPattern('I1.>', 1)) scanned.push(commit);
    expect(dataOf(scanned)).toEqual(expected);
    // A reader with a cold cache (another process) asks the bucket.
    const cold = new SealedEventStore(inner, new ContentKeys(new InMemoryKeyBucket()));
    expect(dataOf(await cold.readStream(stream))[0]).toMatchObject({ text: null, erased: true });
  });

  it('after the key is destroyed, content reads null with erased: true; types, times, ids and numbers stay; nothing is rewritten', async () => {
    const before = JSON.stringify(await inner.readPattern('I1.>', 1, 100));
    await keys.destroy('I1');
    const commits = (await store.readPattern('I1.>', 1, 100)).commits;
    expect(commits.map((c) => [c.stream, c.sequence, c.events[0]!.type, c.events[0]!.occurredAt])).toEqual([
      [stream, 1, 'MessageAccepted', AT],
      [stream, 2, 'MessageSent', AT],
      ['I1.message.in1', 3, 'MessageReceived', AT],
    ]);
    expect(dataOf(commits)).toEqual([
      { message_id: 'm1', to: '4915112345678', type: 'media', text: null, media_url: null, filename: null, erased: true },
      sent.data,
      {
        message_id: 'in1',
        from: '4915100000000',
        push_name: null,
        text: null,
        media: { mimetype: 'application/pdf', filename: null, size: 42 },
        timestamp: AT,
        erased: true,
      },
    ]);
    expect(JSON.stringify(await inner.readPattern('I1.>', 1, 100))).toBe(before);
  });

  it('seals new content with a new key after an erasure; the older content stays erased', async () => {
    await keys.destroy('I1');
    await store.append(messageStream('I1', 'm2'), [{ ...accepted, data: { ...accepted.data, message_id: 'm2', text: 'new' } }], {
      expectedVersion: 0,
      commandId: 'b',
    });
    const data = dataOf((await store.readPattern('I1.message.*', 1, 100)).commits) as Array<Record<string, unknown>>;
    expect(data[0]).toMatchObject({ message_id: 'm1', erased: true });
    expect(data[3]).toMatchObject({ message_id: 'm2', text: 'new' });
    expect(data[3]).not.toHaveProperty('erased');
  });

  it('hands subscribers opened commits, and their acks to the store', async () => {
    await keys.destroy('I1');
    const subscription = await store.subscribe('I1.message.m1', { durableName: 'test' });
    const seen: unknown[] = [];
    for await (const delivery of subscription) {
      seen.push(delivery.commit.events[0]!.data);
      delivery.ack();
      if (seen.length === 2) break;
    }
    await subscription.close();
    expect(seen[0]).toMatchObject({ text: null, erased: true });
  });

  it('hands a subscriber that reads no content (content: false) the events with their content fields null, unopened', async () => {
    const subscription = await store.subscribe('I1.message.m1', { content: false });
    const seen: unknown[] = [];
    for await (const delivery of subscription) {
      seen.push(delivery.commit.events[0]!.data);
      if (seen.length === 2) break;
    }
    await subscription.close();
    expect(seen).toEqual([
      { message_id: 'm1', to: '4915112345678', type: 'media', text: null, media_url: null, filename: null },
      { message_id: 'm1', to: '4915112345678' },
    ]);
  });

  it('reads events stored before sealing existed (plaintext) as they were written', async () => {
    await inner.append(messageStream('I2', 'old'), [accepted], { expectedVersion: 0, commandId: 'old' });
    expect(dataOf(await store.readStream(messageStream('I2', 'old')))).toEqual([accepted.data]);
  });
});

// The decorator keeps the port's contract (over the in-memory adapter; contract events carry no content fields).
describeEventStoreContract('Sealed (in-memory)', async () => ({
  store: new SealedEventStore(new InMemoryEventStore(), new ContentKeys(new InMemoryKeyBucket())),
  close: async () => undefined,
}));
