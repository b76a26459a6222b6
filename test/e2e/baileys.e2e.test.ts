import { createServer, type Server } from 'node:http';
import { BUCKETS, connectNats, type NatsHandle } from '@wagw/lib';

import { NatsTextBucket } from '../../services/sessions/src/connector/baileys/textBucket';
import type { WaEmulator } from '../emulator/types';
import { linkOverEmulator, startBaileysStack, type BaileysStack } from '../harness/baileysStack';
import type { TestStack } from '../harness/stack';
import { testLogger } from '../harness/logger';
import { eventually, sleep } from '../harness/wait';
import { decodeQr } from '../harness/qrCode';

/** The fields of a QR text (after Baileys 7's link prefix): ref, noise key, identity key, adv secret, platform. */
const qrFields = (text: string): string[] => text.slice(text.indexOf('#') + 1).split(',');
const qrRef = (text: string): string => qrFields(text)[0] ?? '';

/** The text of a get_qrcode answer's PNG. */
const qrText = (qrcode: unknown): string => {
  const text = typeof qrcode === 'string' ? decodeQr(qrcode) : null;
  if (!text) throw new Error('the QR code PNG does not decode');
  return text;
};

type HistoryEvent = { type: string; stream: string; data: Record<string, unknown> };

const IMAGE = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const PDF = Buffer.from('%PDF-1.4 quarterly numbers\n%%EOF\n');
const VOICE = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(1024, 5)]);

/**
 * The real Baileys connector, through the gateway's HTTP API, against the WhatsApp Web emulator on loopback:
 * QR codes, pairing, login, Signal-encrypted sends with receipts, media uploads, inbound messages and the
 * disconnect codes WhatsApp ends connections with.
 */
describe('sessions over HTTP with the Baileys connector and the WhatsApp Web emulator', () => {
  let baileys: BaileysStack;
  let emulator: WaEmulator;
  let stack: TestStack;
  let nats: NatsHandle;
  let media: Server;
  let mediaUrl: string;

  beforeAll(async () => {
    // Numbers starting with 000 have no WhatsApp account.
    baileys = await startBaileysStack({}, { registered: (number) => !number.startsWith('000') });
    ({ emulator, stack } = baileys);
    media = createServer((req, res) => {
      if (req.url === '/cat.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(IMAGE);
      if (req.url === '/report.pdf') return res.writeHead(200, { 'content-type': 'application/pdf' }).end(PDF);
      if (req.url === '/hello.ogg') return res.writeHead(200, { 'content-type': 'audio/ogg; codecs=opus' }).end(VOICE);
      return res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaUrl = `http://127.0.0.1:${(media.address() as { port: number }).port}`;
    nats = await connectNats({ url: stack.nats.url, name: 'baileys-e2e', logger: testLogger('baileys-e2e') });
  }, 60_000);

  afterAll(async () => {
    await nats.close();
    await baileys.close();
    media.closeAllConnections();
    await new Promise((r) => media.close(r));
  });

  const history = async (id: string): Promise<HistoryEvent[]> => (await stack.call(`/v1/history?instance_id=${id}&limit=1000`)).body.events as HistoryEvent[];

  const status = (id: string) => stack.call(`/v1/status?instance_id=${id}`);

  const stateIs = (id: string, state: string, timeoutMs = 20_000) =>
    eventually(
      () => status(id),
      (s) => s.body.state === state,
      timeoutMs,
    );

  /** The QR the gateway shows, scanned by the emulated phone of `number`: a connected instance. */
  const linkedInstance = (number: string): Promise<string> => linkOverEmulator(baileys, number);

  const logins = (number: string) => emulator.connections().filter((c) => c.number === number && c.stage === 'logged-in');

  it("answers get_qrcode with a PNG of the QR string the emulator's refs produced", async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const qr = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
    expect(qr.status).toBe(200);
    expect(qr.body.qrcode).toMatch(/^data:image\/png;base64,/);
    const text = qrText(qr.body.qrcode);
    // Baileys 7 shows 'https://wa.me/settings/linked_devices#ref,noise,identity,adv,platform'.
    expect(text).toMatch(/^https:\/\/wa\.me\/settings\/linked_devices#/);
    const [ref, noiseKey, identityKey, advSecret] = qrFields(text);
    const pairing = emulator.connections().find((c) => c.stage === 'pairing' && c.qrRefs.includes(ref ?? ''));
    expect(pairing).toBeDefined();
    expect([noiseKey, identityKey, advSecret].map((part) => Buffer.from(part ?? '', 'base64').length)).toEqual([32, 32, 32]);
    expect(JSON.stringify(await history(id))).not.toContain(ref);
  });

  it('answers get_qrcode at once with the reason when WhatsApp cannot be reached, and links once it can', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    emulator.setReachable(false);
    const started = Date.now();
    const failed = await stack.call(`/v1/get_qrcode?instance_id=${id}`).finally(() => emulator.setReachable(true));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({ code: 'platform_connection_failed', error: expect.stringContaining('try again') });
    // The connection's facts are recorded behind the answer (in order, per instance): the status shows the reason
    // within moments, not necessarily at once (a CI run read it before the disconnect was recorded).
    const s = await eventually(
      () => status(id),
      (r) => r.body.state === 'created' && typeof r.body.last_disconnect_reason === 'string',
    );
    expect(s.body).toMatchObject({ state: 'created', linked_number: null, last_disconnect_reason: expect.any(String) });
    const qr = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
    expect(qr.status).toBe(200);
    await emulator.scan(qrText(qr.body.qrcode), '4915100000008');
    expect((await stateIs(id, 'connected')).body.state).toBe('connected');
  });

  it('links on a scan: pair-success, the 515 restart and a login; status shows the linked number', async () => {
    const id = await linkedInstance('4915112345678');
    const s = await status(id);
    expect(s.body).toMatchObject({ state: 'connected', linked_number: '4915112345678' });
    expect(logins('4915112345678')).toHaveLength(1);
    const types = (await history(id)).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['InstanceQrIssued', 'InstanceLinked', 'InstanceConnected']));
  });

  it('sends text the phone decrypts, and records its delivery and read receipts', async () => {
    const id = await linkedInstance('4915100000003');
    const sent = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=${encodeURIComponent('hello over Signal')}`);
    expect(sent.status).toBe(200);
    const messageId = sent.body.message_id as string;
    const received = await emulator.waitForReceived((m) => m.fromNumber === '4915100000003');
    expect(received).toMatchObject({ toNumber: '4915199999999', text: 'hello over Signal', error: undefined });
    const events = await eventually(
      () => history(id),
      (h) => h.some((e) => e.stream.endsWith(messageId) && e.type === 'MessageRead'),
    );
    expect(events.filter((e) => e.stream.endsWith(messageId)).map((e) => e.type)).toEqual([
      'MessageAccepted',
      'MessageSent',
      'MessageDelivered',
      'MessageRead',
    ]);
  });

  it('fails a send to a number without WhatsApp at once, with the reason, and keeps sending to others', async () => {
    const id = await linkedInstance('4915100000006');
    const unknown = await stack.call(`/v1/send?instance_id=${id}&number=0004915199999&type=text&message=nobody`);
    const known = await stack.call(`/v1/send?instance_id=${id}&number=4915199999997&type=text&message=somebody`);
    expect([unknown.status, known.status]).toEqual([200, 200]);
    const events = await eventually(
      () => history(id),
      (h) => h.some((e) => e.type === 'MessageFailed'),
    );
    expect(events.find((e) => e.type === 'MessageFailed')?.data).toMatchObject({
      message_id: unknown.body.message_id,
      reason: 'recipient_not_on_platform',
    });
    expect((await emulator.waitForReceived((m) => m.fromNumber === '4915100000006')).text).toBe('somebody');
  });

  it('sends an image and a document: encrypted uploads reach the media host and the messages carry them', async () => {
    const id = await linkedInstance('4915100000004');
    const image = await stack.call(
      `/v1/send?instance_id=${id}&number=4915199999998&type=media&message=look&media_url=${encodeURIComponent(`${mediaUrl}/cat.png`)}`,
    );
    const doc = await stack.call('/v1/send', {
      method: 'POST',
      body: JSON.stringify({ instance_id: id, number: '4915199999998', type: 'media', media_url: `${mediaUrl}/report.pdf`, filename: 'Q3 report.pdf' }),
    });
    expect([image.status, doc.status]).toEqual([200, 200]);
    const picture = await emulator.waitForReceived((m) => m.fromNumber === '4915100000004' && m.media?.kind === 'image');
    expect(picture.media).toMatchObject({ mimetype: 'image/png', caption: 'look', fileLength: IMAGE.length });
    expect(picture.media?.upload?.plaintext).toEqual(IMAGE);
    expect(picture.media?.url).toContain(emulator.mediaHost);
    const document = await emulator.waitForReceived((m) => m.fromNumber === '4915100000004' && m.media?.kind === 'document');
    expect(document.media).toMatchObject({ mimetype: 'application/pdf', fileName: 'Q3 report.pdf', fileLength: PDF.length });
    expect(document.media?.upload?.plaintext).toEqual(PDF);
  });

  it('sends an audio file as a voice note: the phone gets an audio message marked push-to-talk, without caption', async () => {
    const id = await linkedInstance('4915100000012');
    const voice = await stack.call('/v1/send', {
      method: 'POST',
      body: JSON.stringify({ instance_id: id, number: '4915199999998', type: 'media', media_url: `${mediaUrl}/hello.ogg`, voice_note: true }),
    });
    expect(voice.status).toBe(200);
    const note = await emulator.waitForReceived((m) => m.fromNumber === '4915100000012' && m.media?.kind === 'audio');
    expect(note.media).toMatchObject({ mimetype: 'audio/ogg; codecs=opus', ptt: true, caption: undefined, fileLength: VOICE.length });
    expect(note.media?.upload?.plaintext).toEqual(VOICE);
  });

  it('turns an inbound text into MessageReceived with sender and push name', async () => {
    const id = await linkedInstance('4915100000005');
    await emulator.sendText('4915100000005', '4917612345678', 'Ana', 'hi there');
    const events = await eventually(
      () => history(id),
      (h) => h.some((e) => e.type === 'MessageReceived'),
    );
    expect(events.find((e) => e.type === 'MessageReceived')?.data).toMatchObject({ from: '4917612345678', push_name: 'Ana', text: 'hi there' });
  });

  it('records a message from a sender addressed by LID under the sender number', async () => {
    const id = await linkedInstance('4915100000009');
    await emulator.sendText('4915100000009', '4917612340000', 'Lia', 'by lid', { viaLid: true });
    const events = await eventually(
      () => history(id),
      (h) => h.some((e) => e.type === 'MessageReceived'),
    );
    expect(events.find((e) => e.type === 'MessageReceived')?.data).toMatchObject({ from: '4917612340000', push_name: 'Lia', text: 'by lid' });
  });

  it('answers get_paircode with the code Baileys asked WhatsApp to show, for the number given', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const answer = await stack.call(`/v1/get_paircode?instance_id=${id}&number=4915100000010`);
    expect(answer.status).toBe(200);
    // Baileys' alphabet (WhatsApp's): 1-9 and A-Z without I, O and U.
    expect(answer.body.code).toMatch(/^[1-9A-HJ-NP-TV-Z]{8}$/);
    const requests = emulator.pairingRequests().filter((r) => r.number === '4915100000010');
    expect(requests).toHaveLength(1);
    expect(emulator.connections().find((c) => c.id === requests[0]!.connectionId)?.stage).toBe('pairing');
  });

  it('checks numbers over usync: registered ones with their id, the others without', async () => {
    const id = await linkedInstance('4915100000011');
    const answer = await stack.call(`/v1/check_number?instance_id=${id}&numbers=4917612345678,0001234567`);
    expect(answer.status).toBe(200);
    expect(answer.body.numbers).toEqual([
      { number: '4917612345678', exists: true, jid: '4917612345678@s.whatsapp.net' },
      { number: '0001234567', exists: false, jid: null },
    ]);
  });

  it('reset logs the device out on the phone, wipes its auth state and goes back to created', async () => {
    const id = await linkedInstance('4915100000007');
    const auth = await NatsTextBucket.open(nats, BUCKETS.waAuth);
    expect((await stack.call(`/v1/reset_instance?instance_id=${id}`)).status).toBe(200);
    const s = await stateIs(id, 'created');
    expect(s.body).toMatchObject({ state: 'created', linked_number: null });
    expect(
      await eventually(
        () => auth.keysUnder(id),
        (keys) => keys.length === 0,
      ),
    ).toEqual([]);
    expect(emulator.devices().some((d) => d.number === '4915100000007')).toBe(false);
    const qr = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
    expect(qr.status).toBe(200);
  });

  describe('disconnect codes', () => {
    it('401: logged_out, and the auth state is purged', async () => {
      const id = await linkedInstance('4915100000401');
      const auth = await NatsTextBucket.open(nats, BUCKETS.waAuth);
      expect((await auth.keysUnder(id)).length).toBeGreaterThan(0);
      await emulator.kick('4915100000401', 'logged-out');
      const s = await stateIs(id, 'logged_out');
      expect(s.body).toMatchObject({ state: 'logged_out' });
      expect(
        await eventually(
          () => auth.keysUnder(id),
          (keys) => keys.length === 0,
        ),
      ).toEqual([]);
      const send = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=x`);
      expect([send.status, send.body.code]).toEqual([409, 'instance_logged_out_on_phone']);
    });

    it('403: failed, and no reconnect', async () => {
      const id = await linkedInstance('4915100000403');
      await emulator.kick('4915100000403', 'forbidden');
      const s = await stateIs(id, 'failed');
      expect(s.body).toMatchObject({ state: 'failed', last_disconnect_reason: 'forbidden' });
      await sleep(2_500);
      expect(logins('4915100000403')).toHaveLength(0);
      // get_qrcode says what can be done, and does not log the refused link in again behind the user's back.
      const qr = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
      expect([qr.status, qr.body.code]).toEqual([409, 'instance_failed']);
      expect(logins('4915100000403')).toHaveLength(0);
    });

    it('440: the lease holder comes back once, with no reconnect loop', async () => {
      const id = await linkedInstance('4915100000440');
      const before = emulator
        .connections()
        .filter((c) => c.number === '4915100000440')
        .map((c) => c.id);
      await emulator.kick('4915100000440', 'replaced');
      await stateIs(id, 'connected', 10_000);
      await sleep(3_000);
      const after = emulator.connections().filter((c) => c.number === '4915100000440' && !before.includes(c.id));
      expect(after).toHaveLength(1);
      const reasons = (await history(id)).filter((e) => e.type === 'InstanceDisconnected').map((e) => e.data.reason);
      expect(reasons).toEqual(['replaced']);
    });

    it.each([
      ['stream-end', 'connection_closed', '4915100000428'],
      ['service-unavailable', 'service_unavailable', '4915100000503'],
    ] as const)('%s: disconnected (%s), then reconnected with backoff from the stored link', async (kick, reason, number) => {
      const id = await linkedInstance(number);
      const kickedAt = Date.now();
      await emulator.kick(number, kick);
      const again = await emulator.waitForConnection((c) => c.number === number && c.stage === 'logged-in' && !!c.jid, 15_000);
      // The first retry waits 1 s ± 30 %: a backoff, not a reconnect at once.
      expect(Date.now() - kickedAt).toBeGreaterThanOrEqual(650);
      expect(again.number).toBe(number);
      expect((await stateIs(id, 'connected')).body.state).toBe('connected');
      const reasons = (await history(id)).filter((e) => e.type === 'InstanceDisconnected').map((e) => e.data.reason);
      expect(reasons).toEqual([reason]);
    });

    it('QR refs exhausted: the QR expires, and the next get_qrcode shows a new one', async () => {
      const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
      const first = qrText((await stack.call(`/v1/get_qrcode?instance_id=${id}`)).body.qrcode);
      const events = await eventually(
        () => history(id),
        (h) => h.some((e) => e.type === 'InstanceQrExpired'),
        15_000,
      );
      expect(events.map((e) => e.type)).toContain('InstanceQrExpired');
      const again = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
      expect(again.status).toBe(200);
      const second = qrText(again.body.qrcode);
      expect(qrRef(second)).not.toBe(qrRef(first));
      expect(emulator.connections().some((c) => c.stage === 'pairing' && c.qrRefs.includes(qrRef(second)))).toBe(true);
    });
  });
});
