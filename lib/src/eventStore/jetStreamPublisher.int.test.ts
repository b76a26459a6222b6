import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { connectNats, type NatsHandle } from '../nats';
import { isAppError } from '../errors';
import { JetStreamPublisher } from './jetStreamPublisher';
import { startTestNats, type TestNats } from '../../../test/harness/natsServer';
import { testLogger } from '../../../test/harness/logger';

describe('JetStream publisher', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  let publisher: JetStreamPublisher;
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'publisher', logger: testLogger(), timeoutMs: 500 });
    await handle.jsm.streams.add({ name: 'PUB', subjects: ['pub.>'], duplicate_window: 60_000_000_000 });
    publisher = new JetStreamPublisher(handle.nc, 500);
  });
  afterAll(async () => {
    await handle.close();
    await nats.dispose();
  });

  it('stores the message with its id and answers its sequence', async () => {
    const ack = await publisher.publish('pub.a', '{"n":1}', { msgId: 'm-1' });
    expect(ack).toMatchObject({ stream: 'PUB', duplicate: false });
    const stored = await handle.jsm.streams.getMessage('PUB', { seq: ack.seq });
    expect(stored?.string()).toBe('{"n":1}');
    expect(stored?.header.get('Nats-Msg-Id')).toBe('m-1');
  });

  it('answers duplicate for a repeated id, without storing it again', async () => {
    const first = await publisher.publish('pub.b', 'x', { msgId: 'm-2' });
    const again = await publisher.publish('pub.b', 'x', { msgId: 'm-2' });
    expect(again).toMatchObject({ seq: first.seq, duplicate: true });
    expect((await handle.jsm.streams.info('PUB')).state.messages).toBe(2);
  });

  it('fails with the JetStream error when the expected last sequence of the subject differs', async () => {
    const first = await publisher.publish('pub.c', '1', { msgId: 'm-3', expectedLastSubjectSequence: 0 });
    const stale = publisher.publish('pub.c', '2', { msgId: 'm-4', expectedLastSubjectSequence: 0 });
    await expect(stale).rejects.toBeInstanceOf(JetStreamApiError);
    await expect(stale).rejects.toMatchObject({ code: JetStreamApiCodes.StreamWrongLastSequence });
    await expect(publisher.publish('pub.c', '2', { msgId: 'm-5', expectedLastSubjectSequence: first.seq })).resolves.toMatchObject({ seq: first.seq + 1 });
  });

  it('fails as unavailable when no stream takes the subject', async () => {
    const error: unknown = await publisher.publish('nostream.a', 'x', { msgId: 'm-6' }).catch((e: unknown) => e);
    expect(isAppError(error) && error.kind).toBe('unavailable');
  });

  it('fails as unavailable when nothing acknowledges the publish within the time-out', async () => {
    const silent = handle.nc.subscribe('silent.a');
    try {
      const started = Date.now();
      const error: unknown = await publisher.publish('silent.a', 'x', { msgId: 'm-7' }).catch((e: unknown) => e);
      expect(isAppError(error) && error.kind).toBe('unavailable');
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      silent.unsubscribe();
    }
  });

  it('answers many publishes in flight at once, each with its own sequence', async () => {
    const acks = await Promise.all(Array.from({ length: 500 }, (_, i) => publisher.publish(`pub.many.${i % 7}`, String(i), { msgId: `many-${i}` })));
    expect(new Set(acks.map((a) => a.seq)).size).toBe(500);
  });
});
