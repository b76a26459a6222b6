import { createServer, type Server, type ServerResponse } from 'node:http';
import { startStack, type TestStack } from '../harness/stack';
import { linkInSandbox } from '../harness/sandboxLink';
import { eventually } from '../harness/wait';

/** Well under the media time-out below: what "at once" means here. */
const PROMPTLY_MS = 2_000;

// reset_instance while a send's media is being fetched from a host that does not answer: the instance's waiting sends
// fail as instance_reset at once (the fetch is aborted, not left to MEDIA_TIMEOUT_MS), and a send made after linking
// again goes out at once, not behind the old fetch.
describe('reset_instance during a media fetch (sandbox connector, HTTP)', () => {
  let stack: TestStack;
  let media: Server;
  let mediaUrl: string;
  /** Requests the media host holds unanswered. */
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    media = createServer((_req, res) => void held.push(res));
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaUrl = `http://127.0.0.1:${(media.address() as { port: number }).port}/slow.png`;
    stack = await startStack({}, true, { mediaTimeoutMs: 15_000 });
  });
  afterAll(async () => {
    await stack.close();
    media.closeAllConnections();
    await new Promise((r) => media.close(r));
  });

  type Event = { type: string; data: Record<string, unknown> };
  const lifeOf = async (id: string, messageId: string): Promise<Event[]> =>
    ((await stack.call(`/v1/history?instance_id=${id}&message_id=${messageId}`)).body.events as Event[] | undefined) ?? [];
  const send = async (id: string, query: string): Promise<string> => {
    const r = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&${query}`);
    expect(r.status).toBe(200);
    return r.body.message_id as string;
  };

  it('fails the waiting sends as instance_reset at once, and a send after linking again goes out at once', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, '4915112345678');
    const m1 = await send(id, `type=media&media_url=${encodeURIComponent(mediaUrl)}`);
    const m2 = await send(id, 'type=text&message=behind%20the%20media');
    await eventually(
      async () => held.length,
      (n) => n === 1,
      5_000,
    );

    const resetAt = Date.now();
    expect((await stack.call(`/v1/reset_instance?instance_id=${id}`)).status).toBe(200);
    const failed = await eventually(
      () => Promise.all([m1, m2].map((m) => lifeOf(id, m))),
      (lives) => lives.every((life) => life.some((e) => e.type === 'MessageFailed')),
      PROMPTLY_MS,
    );
    expect(Date.now() - resetAt).toBeLessThan(PROMPTLY_MS);
    expect(failed.map((life) => life.filter((e) => e.type === 'MessageFailed').map((e) => e.data.reason))).toEqual([['instance_reset'], ['instance_reset']]);
    // The count comes from the send ledger, a read model a moment behind the failures.
    const status = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => (s.body as { quotas: { queued_sends: { used: number } } }).quotas.queued_sends.used === 0,
      PROMPTLY_MS,
    );
    expect(status.body).toMatchObject({ quotas: { queued_sends: { used: 0 } } });

    await linkInSandbox(stack, id, '4915100000002');
    const sentAt = Date.now();
    const m3 = await send(id, 'type=text&message=over%20the%20new%20link');
    const life = await eventually(
      () => lifeOf(id, m3),
      (l) => l.some((e) => e.type === 'MessageSent'),
      PROMPTLY_MS,
    );
    expect(Date.now() - sentAt).toBeLessThan(PROMPTLY_MS);
    expect(life.map((e) => e.type)).toContain('MessageSent');
    // Nothing of the old link went out over the new one.
    expect(stack.sessions.sandbox?.sent(id).map((m) => m.messageId)).toEqual([m3]);
  }, 30_000);
});
