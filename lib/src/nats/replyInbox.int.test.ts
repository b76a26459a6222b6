import { connectNats, type NatsHandle } from './connection';
import { ReplyInbox } from './replyInbox';
import { startTestNats, type TestNats } from '../../../test/harness/natsServer';
import { testLogger } from '../../../test/harness/logger';

describe('reply inbox', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  let inbox: ReplyInbox;
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'reply-inbox', logger: testLogger() });
    // An echo service, and a silent one.
    handle.nc.subscribe('echo', { callback: (_error, msg) => void msg.respond(`re:${msg.string()}`) });
    handle.nc.subscribe('silent');
    inbox = new ReplyInbox(handle.nc, 300);
  });
  afterAll(async () => {
    await handle.close();
    await nats.dispose();
  });

  it('answers each request with its own reply, many in flight at once', async () => {
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => inbox.request((reply) => handle.nc.publish('echo', String(i), { reply }))));
    expect(replies.map((m) => m?.string())).toEqual(Array.from({ length: 200 }, (_, i) => `re:${i}`));
  });

  it('answers null when no reply comes within the time-out', async () => {
    const started = Date.now();
    expect(await inbox.request((reply) => handle.nc.publish('silent', 'x', { reply }))).toBeNull();
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('answers null at once for a publish that fails, now or later', async () => {
    expect(
      await inbox.request(() => {
        throw new Error('closed');
      }),
    ).toBeNull();
    expect(await inbox.request((_reply, fail) => setImmediate(fail))).toBeNull();
  });

  it('answers null for every request abandoned under its tag, and only those', async () => {
    const abandoned = inbox.request((reply) => handle.nc.publish('silent', 'a', { reply }), 'gone');
    const kept = inbox.request((reply) => handle.nc.publish('echo', 'b', { reply }), 'alive');
    inbox.abandon('gone');
    expect(await abandoned).toBeNull();
    expect((await kept)?.string()).toBe('re:b');
  });

  it('answers null for what waits when its connection closes, and for anything asked after', async () => {
    const other = await connectNats({ url: nats.url, name: 'reply-inbox-closing', logger: testLogger() });
    const closing = new ReplyInbox(other.nc, 60_000);
    const waiting = closing.request((reply) => other.nc.publish('silent', 'x', { reply }));
    await other.close();
    expect(await waiting).toBeNull();
    expect(await closing.request((reply) => other.nc.publish('echo', 'x', { reply }))).toBeNull();
  });
});
