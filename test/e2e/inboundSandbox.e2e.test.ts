import type { SandboxPlatform } from '../../services/sessions/src/connector/sandbox';
import { sandboxMediaFile } from '../../services/sessions/src/connector/sandbox/sandboxMedia';
import { startStack, type TestStack } from '../harness/stack';
import { WebhookReceiver } from '../harness/webhookReceiver';
import { eventually } from '../harness/wait';
import { linkInSandbox } from '../harness/sandboxLink';

type HistoryEvent = { type: string; stream: string; data: Record<string, unknown> };

/** Received messages on the sandbox connector, over HTTP: mark_read, GET /v1/media, and the webhook's media url. */
describe('received messages with the sandbox connector: mark_read and media', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  const CAP = 64 * 1024;

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    stack = await startStack({}, true, { mediaDownloadMaxBytes: CAP });
  }, 60_000);

  afterAll(async () => {
    await stack.close();
    await receiver.stop();
  });

  const sandbox = (): SandboxPlatform => {
    if (!stack.sessions.sandbox) throw new Error('the stack runs no sandbox');
    return stack.sessions.sandbox;
  };

  const linkedInstance = async (path: string, number: string): Promise<string> => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const set = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(receiver.url(path))}`);
    receiver.secret(path, set.body.signing_secret as string);
    await linkInSandbox(stack, id, number);
    return id;
  };

  /** A simulated contact's message; answers its MessageReceived (from the history). */
  const receive = async (id: string, query: string): Promise<Record<string, unknown>> => {
    const before = await received(id);
    const r = await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4917612345678&${query}`);
    expect(r.status).toBe(200);
    const events = await eventually(
      () => received(id),
      (list) => list.length > before.length,
    );
    return events[events.length - 1]!.data;
  };

  const received = async (id: string): Promise<HistoryEvent[]> =>
    ((await stack.call(`/v1/history?instance_id=${id}&limit=1000`)).body.events as HistoryEvent[]).filter((e) => e.type === 'MessageReceived');

  const media = (id: string, messageId: string, token = stack.token()) =>
    fetch(`${stack.baseUrl}/v1/media?instance_id=${id}&message_id=${messageId}`, { headers: { authorization: `Bearer ${token}` } });

  it('marks a received message read (the sandbox records the receipt), by GET and by POST', async () => {
    const id = await linkedInstance('/read', '4915100000101');
    const message = await receive(id, 'text=read%20me');
    const messageId = message.message_id as string;
    const get = await stack.call(`/v1/mark_read?instance_id=${id}&message_id=${messageId}`);
    expect(get).toMatchObject({ status: 200, body: { success: true } });
    const post = await stack.call('/v1/mark_read', { method: 'POST', body: JSON.stringify({ instance_id: id, message_id: messageId }) });
    expect(post).toMatchObject({ status: 200, body: { success: true } });
    expect(
      sandbox()
        .readMarksOf(id)
        .map((mark) => mark.from),
    ).toEqual(['4917612345678', '4917612345678']);
  });

  it('answers 4xx with a clear code for a bad id (a sent message id), an unknown or foreign message, and a disconnected instance', async () => {
    const id = await linkedInstance('/read-bad', '4915100000102');
    const other = await linkedInstance('/read-other', '4915100000103');
    const foreign = (await receive(other, 'text=not%20yours')).message_id as string;
    const bad = await stack.call(`/v1/mark_read?instance_id=${id}&message_id=m_123`);
    expect(bad).toMatchObject({ status: 400 });
    expect(bad.body.code).toMatch(/invalid/);
    const unknown = await stack.call(`/v1/mark_read?instance_id=${id}&message_id=in_000000000000000000000000`);
    expect(unknown).toMatchObject({ status: 404, body: { code: 'message_not_found' } });
    expect(await stack.call(`/v1/mark_read?instance_id=${id}&message_id=${foreign}`)).toMatchObject({ status: 404, body: { code: 'message_not_found' } });
    // Another account's instance does not exist for the caller.
    const stranger = await stack.call(`/v1/mark_read?instance_id=${other}&message_id=${foreign}`, { account: 'someone-else' });
    expect(stranger).toMatchObject({ status: 404, body: { code: 'instance_not_found' } });
    const mine = (await receive(id, 'text=mine')).message_id as string;
    sandbox().disconnect(id);
    const offline = await eventually(
      () => stack.call(`/v1/mark_read?instance_id=${id}&message_id=${mine}`),
      (r) => r.status !== 200,
    );
    expect(offline).toMatchObject({ status: 409, body: { code: 'not_connected' } });
  });

  it('serves received media with its type and file name, says so in message.received, and refuses what has none or is too big', async () => {
    const id = await linkedInstance('/media', '4915100000104');
    const doc = await receive(id, 'media=document&media_size=5000&text=the%20contract');
    expect(doc).toMatchObject({ text: 'the contract', media: { mimetype: 'application/pdf', filename: 'sandbox.pdf', size: 5000 } });
    const file = await media(id, doc.message_id as string);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="sandbox.pdf"; filename*=UTF-8''sandbox.pdf`);
    const body = Buffer.from(await file.arrayBuffer());
    expect(body).toHaveLength(5000);
    expect(body.subarray(0, 8).toString()).toBe('%PDF-1.4');

    const hooks = await receiver.waitFor('/media', 2);
    expect(hooks[1]!.body).toMatchObject({
      type: 'message.received',
      data: { media: { mimetype: 'application/pdf', size: 5000, url: `/v1/media?instance_id=${id}&message_id=${doc.message_id as string}` } },
    });

    const image = await receive(id, 'media=image');
    const png = await media(id, image.message_id as string);
    expect([png.status, png.headers.get('content-type'), png.headers.get('content-disposition')]).toEqual([200, 'image/png', 'attachment']);

    const text = await receive(id, 'text=no%20file');
    const none = await media(id, text.message_id as string);
    expect([none.status, ((await none.json()) as { code: string }).code]).toEqual([404, 'no_media']);
    const big = await receive(id, `media=video&media_size=${CAP + 1}`);
    const tooBig = await media(id, big.message_id as string);
    expect([tooBig.status, ((await tooBig.json()) as { code: string }).code]).toEqual([413, 'media_too_large']);
    const badId = await media(id, 'nope');
    expect(badId.status).toBe(400);
    expect((await media(id, 'in_000000000000000000000000')).status).toBe(404);
    expect((await media(id, doc.message_id as string, stack.token('someone-else'))).status).toBe(404);
    // An instance token: media needs read, mark_read needs send.
    const reader = stack.token('acme', { instanceId: id, scopes: ['read'] });
    expect((await media(id, doc.message_id as string, reader)).status).toBe(200);
    const markRead = await fetch(`${stack.baseUrl}/v1/mark_read?instance_id=${id}&message_id=${doc.message_id as string}`, {
      headers: { authorization: `Bearer ${reader}` },
    });
    expect([markRead.status, ((await markRead.json()) as { code: string }).code]).toEqual([403, 'insufficient_scope']);
  });

  it('refuses a simulated message with neither text nor media, or of an unknown media kind', async () => {
    const id = await linkedInstance('/inbound-bad', '4915100000105');
    expect(await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4917612345678`)).toMatchObject({ status: 400, body: { code: 'invalid_inbound' } });
    expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4917612345678&media=hologram`)).status).toBe(400);
  });
});

describe('AUTO_MARK_READ on the sandbox connector', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({}, true, { autoMarkRead: true });
  }, 60_000);

  afterAll(() => stack.close());

  it('sends a read receipt for every inbound message as it arrives, and records the message first', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, '4915100000106');
    for (const text of ['one', 'two']) expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4917612345678&text=${text}`)).status).toBe(200);
    const platform = stack.sessions.sandbox;
    const marks = await eventually(
      async () => platform?.readMarksOf(id) ?? [],
      (list) => list.length === 2,
    );
    expect(marks.map((mark) => mark.from)).toEqual(['4917612345678', '4917612345678']);
    const history = await stack.call(`/v1/history?instance_id=${id}&limit=100`);
    expect((history.body.events as HistoryEvent[]).filter((e) => e.type === 'MessageReceived')).toHaveLength(2);
  });
});

describe('received files larger than one gRPC message, one at a time (MEDIA_DOWNLOADS_MAX=1)', () => {
  const SIZE = 6_000_000;
  /** Larger than every buffer between the sessions service and a reader that stopped (sockets, HTTP/2 windows). */
  const LARGE = 30_000_000;
  let stack: TestStack;
  const urls: string[] = [];
  beforeAll(async () => {
    stack = await startStack({}, true, { mediaDownloadMaxBytes: 32 * 1024 * 1024, mediaDownloadsMax: 1 });
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, '4915100000107');
    for (const size of [SIZE, LARGE]) {
      expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4917612345678&media=document&media_size=${size}`)).status).toBe(200);
    }
    const received = await eventually(
      async () => ((await stack.call(`/v1/history?instance_id=${id}&types=MessageReceived`)).body.events as HistoryEvent[]) ?? [],
      (events) => events.length === 2,
    );
    for (const event of received) urls.push(`${stack.baseUrl}/v1/media?instance_id=${id}&message_id=${event.data.message_id as string}`);
  }, 60_000);
  afterAll(() => stack.close());

  /** The 6 MB file (0) or the 30 MB one (1). */
  const download = (file = 0) => fetch(urls[file]!, { headers: { authorization: `Bearer ${stack.token()}` } });

  it('serves a 6 MB document whole and byte for byte (it travels in 64 KiB chunks, over the 4 MiB gRPC message default)', async () => {
    const size = SIZE;
    const file = await download();
    expect([file.status, file.headers.get('content-type'), file.headers.get('content-length')]).toEqual([200, 'application/pdf', String(size)]);
    const body = Buffer.from(await file.arrayBuffer());
    // The sandbox makes the file from a seed it writes after the header: the same file, made here, must match.
    const header = '%PDF-1.4\n% sandbox document\n';
    const seed = body
      .subarray(header.length + 1, header.length + 200)
      .toString()
      .split(' ')[0]!;
    const expected = sandboxMediaFile({ kind: 'document', size, seed }, size).data;
    expect(body.length).toBe(size);
    expect(body.equals(expected)).toBe(true);
  });

  it('answers 429 media_downloads_busy while a slow reader holds the only slot, and serves again once it is done', async () => {
    const slow = await download(1);
    expect(slow.status).toBe(200);
    const reader = slow.body!.getReader();
    await reader.read(); // reads a little, then stops: the stream waits for it
    const busy = await download();
    expect([busy.status, ((await busy.json()) as { code: string }).code]).toEqual([429, 'media_downloads_busy']);
    let received = 0;
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) received += (chunk.value as Uint8Array).length;
    expect(received).toBeGreaterThan(LARGE / 2);
    const again = await eventually(
      () => download(),
      (r) => r.status === 200,
    );
    expect((await again.arrayBuffer()).byteLength).toBe(SIZE);
  });
});
