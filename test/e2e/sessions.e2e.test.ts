import { createServer, type Server } from 'node:http';
import type { SandboxPlatform } from '../../services/sessions/src/connector/sandbox';
import { startStack, type TestStack } from '../harness/stack';
import { WebhookReceiver } from '../harness/webhookReceiver';
import { eventually } from '../harness/wait';
import { linkInSandbox } from '../harness/sandboxLink';
import { decodeQr } from '../harness/qrCode';

describe('sessions over HTTP with the sandbox connector', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let media: Server;
  let flakyHits = 0;
  let mediaUrl: string;
  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    media = createServer((req, res) => {
      if (req.url === '/cat.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(2048, 7));
      if (req.url === '/report.pdf') return res.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.alloc(4096, 1));
      if (req.url === '/slow.png') return void setTimeout(() => res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(16)), 3_000).unref();
      // Down for its first request, then up: a host that blipped.
      if (req.url === '/flaky.png' && flakyHits++ === 0) return res.writeHead(503).end();
      if (req.url === '/flaky.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(512, 3));
      if (req.url === '/huge.bin') return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(2 * 1024 * 1024));
      return res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaUrl = `http://127.0.0.1:${(media.address() as { port: number }).port}`;
    // A failing media host is tried again for SEND_RETRY_FOR_MS: 3 s here, so the failures below come in seconds.
    stack = await startStack({}, true, { sendRetryForMs: 3_000 });
  });
  afterAll(async () => {
    await stack.close();
    await receiver.stop();
    media.closeAllConnections();
    await new Promise((r) => media.close(r));
  });

  const sandbox = (): SandboxPlatform => {
    if (!stack.sessions.sandbox) throw new Error('the test stack runs the sandbox connector');
    return stack.sessions.sandbox;
  };

  const history = async (id: string): Promise<Array<{ type: string; stream: string; data: Record<string, unknown> }>> =>
    (await stack.call(`/v1/history?instance_id=${id}&limit=1000`)).body.events as Array<{ type: string; stream: string; data: Record<string, unknown> }>;

  /** create -> webhook -> get_qrcode -> scan: a connected instance. */
  const linkedInstance = async (path: string, number = '4915112345678'): Promise<string> => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const set = await stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(receiver.url(path))}`);
    receiver.secret(path, set.body.signing_secret as string);
    await linkInSandbox(stack, id, number);
    return id;
  };

  it('links an instance: QR code PNG (decoded = the platform QR) -> scan -> connected with its number', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const qr = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
    expect(qr.status).toBe(200);
    expect(qr.body.qrcode).toMatch(/^data:image\/png;base64,/);
    expect(decodeQr(qr.body.qrcode as string)).toBe(sandbox().currentQr(id));
    expect((await stack.call(`/v1/status?instance_id=${id}`)).body.state).toBe('qr');
    await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=4915100000001`);
    const status = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state === 'connected',
    );
    expect(status.body).toMatchObject({ state: 'connected', linked_number: '4915100000001' });
    const again = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
    expect([again.status, again.body.code]).toEqual([409, 'already_connected']);
    const events = (await history(id)).map((e) => e.type);
    expect(events).toEqual(expect.arrayContaining(['InstanceConnecting', 'InstanceQrIssued', 'InstanceLinked', 'InstanceConnected']));
    expect(JSON.stringify(await history(id))).not.toContain(sandbox().currentQr(id) ?? 'no-qr-left');
  });

  it('sends text (POST and GET): accepted at once, then sent, delivered and read in the history and on the webhook', async () => {
    const id = await linkedInstance('/text');
    const post = await stack.call('/v1/send', {
      method: 'POST',
      body: JSON.stringify({ instance_id: id, number: '4915199999999', type: 'text', message: 'hello' }),
    });
    expect(post.status).toBe(200);
    expect(post.body).toMatchObject({ status: 200, message_id: expect.stringMatching(/^m_/) });
    const get = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=${encodeURIComponent('second one')}`);
    expect(get.status).toBe(200);
    const messageId = post.body.message_id as string;
    const events = await eventually(
      () => history(id),
      (h) => h.filter((e) => e.stream.endsWith(messageId)).length >= 4,
    );
    expect(events.filter((e) => e.stream.endsWith(messageId)).map((e) => e.type)).toEqual([
      'MessageAccepted',
      'MessageSent',
      'MessageDelivered',
      'MessageRead',
    ]);
    // One message's whole life, and nothing else, with the message_id filter.
    const life = await stack.call(`/v1/history?instance_id=${id}&message_id=${messageId}`);
    expect((life.body.events as Array<{ type: string }>).map((e) => e.type)).toEqual(['MessageAccepted', 'MessageSent', 'MessageDelivered', 'MessageRead']);
    expect(
      sandbox()
        .sent(id)
        .map((m) => m.text),
    ).toEqual(['hello', 'second one']);
    const hooks = await receiver.waitFor('/text', 7);
    expect(hooks[0]!.body.type).toBe('instance.connected');
    expect(hooks.filter((h) => h.body.data.message_id === messageId).map((h) => h.body.type)).toEqual(['message.sent', 'message.delivered', 'message.read']);
  });

  it('sends media as image and document, fetched from its URL', async () => {
    const id = await linkedInstance('/media');
    const image = await stack.call(
      `/v1/send?instance_id=${id}&number=4915199999999&type=media&message=look&media_url=${encodeURIComponent(`${mediaUrl}/cat.png`)}`,
    );
    const doc = await stack.call('/v1/send', {
      method: 'POST',
      body: JSON.stringify({ instance_id: id, number: '4915199999999', type: 'media', media_url: `${mediaUrl}/report.pdf`, filename: 'Q3 report.pdf' }),
    });
    expect([image.status, doc.status]).toEqual([200, 200]);
    await eventually(
      async () => sandbox().sent(id),
      (s) => s.length === 2,
    );
    expect(
      sandbox()
        .sent(id)
        .map((m) => m.media),
    ).toEqual([
      expect.objectContaining({ mimetype: 'image/png', size: 2048, caption: 'look' }),
      expect.objectContaining({ mimetype: 'application/pdf', size: 4096, filename: 'Q3 report.pdf' }),
    ]);
  });

  it('fails media that is too large, unreachable or too slow with a reason (MessageFailed), never a 500; a host that blipped is tried again', async () => {
    const id = await linkedInstance('/badmedia');
    const sendMedia = (url: string) => stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=media&media_url=${encodeURIComponent(url)}`);
    const answers = [
      await sendMedia(`${mediaUrl}/huge.bin`),
      await sendMedia('http://127.0.0.1:1/x.png'),
      await sendMedia(`${mediaUrl}/slow.png`),
      await sendMedia(`${mediaUrl}/flaky.png`),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    // Too large fails at once; unreachable and slow are tried again for SEND_RETRY_FOR_MS, then fail with their reason.
    const events = await eventually(
      () => history(id),
      (h) => h.filter((e) => e.type === 'MessageFailed').length === 3 && h.some((e) => e.type === 'MessageSent'),
      20_000,
    );
    const reasons = events.filter((e) => e.type === 'MessageFailed').map((e) => e.data.reason as string);
    expect(reasons.sort()).toEqual([
      expect.stringMatching(/^media_timeout/),
      expect.stringMatching(/^media_too_large/),
      expect.stringMatching(/^media_unreachable/),
    ]);
    expect([
      flakyHits,
      sandbox()
        .sent(id)
        .map((m) => m.media?.size),
    ]).toEqual([2, [512]]);
  });

  it('turns an inbound message into MessageReceived with sender and push name, and a message.received webhook', async () => {
    const id = await linkedInstance('/inbound');
    const r = await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4917612345678&push_name=Ana&text=${encodeURIComponent('hi there')}`);
    expect(r.status).toBe(200);
    const events = await eventually(
      () => history(id),
      (h) => h.some((e) => e.type === 'MessageReceived'),
    );
    expect(events.find((e) => e.type === 'MessageReceived')?.data).toMatchObject({ from: '4917612345678', push_name: 'Ana', text: 'hi there' });
    const hooks = await receiver.waitFor('/inbound', 2);
    expect(hooks.map((h) => h.body.type)).toEqual(['instance.connected', 'message.received']);
    expect(hooks[1]!.body).toMatchObject({ type: 'message.received', data: { from: '4917612345678', push_name: 'Ana', text: 'hi there' } });
  });

  it('answers the same message_id for a repeated Idempotency-Key and sends once; the key for another message is a 409', async () => {
    const id = await linkedInstance('/idem');
    const headers = { 'idempotency-key': 'order-42' };
    const body = JSON.stringify({ instance_id: id, number: '4915199999999', type: 'text', message: 'once' });
    const a = await stack.call('/v1/send', { method: 'POST', body, headers });
    const b = await stack.call('/v1/send', { method: 'POST', body, headers });
    expect(b.body.message_id).toBe(a.body.message_id);
    // The same key for another message is refused: it would never go out, so it must not be answered as taken.
    const other = JSON.stringify({ instance_id: id, number: '4915199999999', type: 'text', message: 'another one' });
    const c = await stack.call('/v1/send', { method: 'POST', body: other, headers });
    expect([c.status, c.body.code]).toEqual([409, 'idempotency_key_reused']);
    await eventually(
      async () => sandbox().sent(id),
      (s) => s.length === 1,
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(sandbox().sent(id)).toHaveLength(1);
  });

  it('reset logs the device out, drops the link and goes back to created', async () => {
    const id = await linkedInstance('/reset');
    await stack.call(`/v1/reset_instance?instance_id=${id}`);
    const status = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state === 'created',
    );
    expect(status.body).toMatchObject({ state: 'created', linked_number: null });
    const send = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=x`);
    expect([send.status, send.body.code]).toEqual([409, 'not_linked']);
    const qr = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
    expect(qr.status).toBe(200);
  });

  it('queues sends while disconnected and sends them once the instance reconnects by itself', async () => {
    const id = await linkedInstance('/drop');
    sandbox().disconnect(id, 'connection_lost');
    const down = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state === 'disconnected',
    );
    expect(down.body).toMatchObject({ state: 'disconnected', last_disconnect_reason: 'connection_lost', linked_number: '4915112345678' });
    const send = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=queued`);
    expect(send.status).toBe(200);
    expect(sandbox().sent(id)).toHaveLength(0);
    await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state === 'connected',
      10_000,
    );
    const sent = await eventually(
      async () => sandbox().sent(id),
      (s) => s.length === 1,
      10_000,
    );
    expect(sent.map((m) => m.text)).toEqual(['queued']);
  });

  it('answers 409 with the reason once the phone logged the device out', async () => {
    const id = await linkedInstance('/loggedout');
    await sandbox().logoutFromPhone(id);
    await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state === 'logged_out',
    );
    const send = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=x`);
    expect([send.status, send.body.code]).toEqual([409, 'instance_logged_out_on_phone']);
    const reconnect = await stack.call(`/v1/reconnect?instance_id=${id}`);
    expect([reconnect.status, reconnect.body.code]).toEqual([409, 'not_linked']);
  });

  it('reconnects a linked instance on request', async () => {
    const id = await linkedInstance('/reconnect');
    const r = await stack.call(`/v1/reconnect?instance_id=${id}`);
    expect(r.body).toMatchObject({ status: 200, success: true });
    const status = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state === 'connected',
    );
    expect(status.body.state).toBe('connected');
  });

  it('connects a linked instance again once the platform is back, after a reconnect asked while it could not be reached', async () => {
    const id = await linkedInstance('/reconnect-outage');
    sandbox().cutNetwork(id);
    await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state !== 'connected',
    );
    const r = await stack.call(`/v1/reconnect?instance_id=${id}`);
    expect(r.status).not.toBe(200);
    sandbox().restoreNetwork(id);
    // Nothing asked again: the claim sweep (every 0.5 s here) takes the instance, as its lease was given up.
    const status = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state === 'connected',
    );
    expect(status.body.state).toBe('connected');
    expect((await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=after`)).status).toBe(200);
    const sent = await eventually(
      async () => sandbox().sent(id),
      (s) => s.length === 1,
    );
    expect(sent.map((m) => m.text)).toEqual(['after']);
  });

  describe('bad input', () => {
    let id: string;
    beforeAll(async () => {
      id = await linkedInstance('/bad');
    });
    const send = (query: string) => stack.call(`/v1/send?instance_id=${id}&${query}`);

    it.each([
      ['+4915112345678', 'invalid_number'],
      ['49 151 1234', 'invalid_number'],
      ['49151abc5678', 'invalid_number'],
      ['123456', 'invalid_number'],
      ['1234567890123456', 'invalid_number'],
    ])('refuses number %s', async (number, code) => {
      const r = await send(`number=${encodeURIComponent(number)}&type=text&message=x`);
      expect([r.status, r.body.code]).toEqual([400, code]);
    });

    it('refuses an Idempotency-Key that is too long or not visible ASCII, as create_instance does (never cut short)', async () => {
      for (const key of ['k'.repeat(256), 'with space']) {
        const r = await stack.call(`/v1/send?instance_id=${id}&number=4915112345678&type=text&message=x`, { headers: { 'idempotency-key': key } });
        expect([r.status, r.body.code]).toEqual([400, 'invalid_idempotency_key']);
      }
      const ok = await stack.call(`/v1/send?instance_id=${id}&number=4915112345678&type=text&message=x`, { headers: { 'idempotency-key': 'k'.repeat(255) } });
      expect(ok.status).toBe(200);
    });

    it('refuses a type other than text or media, text without message, media without or with a bad URL, and missing parameters', async () => {
      expect((await send('number=4915112345678&type=sticker&message=x')).status).toBe(400);
      expect((await send('number=4915112345678&type=text')).body.code).toBe('missing_message');
      expect((await send('number=4915112345678&type=media')).body.code).toBe('invalid_media_url');
      expect((await send(`number=4915112345678&type=media&media_url=${encodeURIComponent('ftp://x.example/a.png')}`)).body.code).toBe('invalid_media_url');
      expect((await stack.call(`/v1/send?instance_id=${id}`)).status).toBe(400);
      expect((await stack.call('/v1/send?number=4915112345678&type=text&message=x')).status).toBe(400);
    });

    it('refuses a never-linked instance with 409, and a foreign or unknown one with 404', async () => {
      const fresh = (await stack.call('/v1/create_instance')).body.instance_id as string;
      const never = await stack.call(`/v1/send?instance_id=${fresh}&number=4915112345678&type=text&message=x`);
      expect([never.status, never.body.code]).toEqual([409, 'not_linked']);
      const foreign = await stack.call(`/v1/send?instance_id=${id}&number=4915112345678&type=text&message=x`, { account: 'intruder' });
      expect(foreign.status).toBe(404);
      expect((await stack.call(`/v1/get_qrcode?instance_id=${id}`, { account: 'intruder' })).status).toBe(404);
      expect((await stack.call('/v1/send?instance_id=ABCDEF0123456789ABCD&number=4915112345678&type=text&message=x')).status).toBe(404);
    });
  });
});
