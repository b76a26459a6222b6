import type { WaEmulator } from '../emulator/types';
import { linkOverEmulator, startBaileysStack, type BaileysStack } from '../harness/baileysStack';
import type { TestStack } from '../harness/stack';
import { eventually } from '../harness/wait';

type HistoryEvent = { type: string; stream: string; data: Record<string, unknown> };

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const CAP = 256 * 1024;

/**
 * Received messages with the real Baileys connector against the WhatsApp Web emulator, over HTTP: read receipts
 * the emulated server records, and media the phone encrypted and stored on the emulator's media host, downloaded
 * and decrypted by the gateway.
 */
describe('received messages over HTTP with the Baileys connector: mark_read and media', () => {
  let baileys: BaileysStack;
  let emulator: WaEmulator;
  let stack: TestStack;

  beforeAll(async () => {
    baileys = await startBaileysStack({ mediaDownloadMaxBytes: CAP });
    ({ emulator, stack } = baileys);
  }, 60_000);

  afterAll(() => baileys.close());

  const received = async (id: string): Promise<HistoryEvent[]> =>
    ((await stack.call(`/v1/history?instance_id=${id}&limit=1000`)).body.events as HistoryEvent[]).filter((e) => e.type === 'MessageReceived');

  /** The data of the instance's `count`-th MessageReceived, once it is stored. */
  const receivedNow = async (id: string, count: number): Promise<Record<string, unknown>> => {
    const events = await eventually(
      () => received(id),
      (list) => list.length >= count,
    );
    return events[count - 1]!.data;
  };

  const linkedInstance = (number: string): Promise<string> => linkOverEmulator(baileys, number);

  const media = (id: string, messageId: string) =>
    fetch(`${stack.baseUrl}/v1/media?instance_id=${id}&message_id=${messageId}`, { headers: { authorization: `Bearer ${stack.token()}` } });

  it("sends WhatsApp's read receipt for a received message: the server gets <receipt type=read> for it", async () => {
    const id = await linkedInstance('4915100000201');
    const platformId = await emulator.sendText('4915100000201', '4917612345001', 'Ana', 'please read');
    const message = await receivedNow(id, 1);
    const before = emulator.clientReceipts().filter((r) => r.type === 'read').length;
    const r = await stack.call(`/v1/mark_read?instance_id=${id}&message_id=${message.message_id as string}`);
    expect(r).toMatchObject({ status: 200, body: { success: true } });
    const reads = await eventually(
      async () => emulator.clientReceipts().filter((receipt) => receipt.type === 'read'),
      (list) => list.length > before,
    );
    expect(reads.at(-1)).toMatchObject({ to: '4917612345001@s.whatsapp.net', ids: [platformId], type: 'read' });
    expect(reads.at(-1)?.from).toContain('4915100000201');
  });

  it('reads a receipt for a sender addressed by LID back to its LID chat', async () => {
    const id = await linkedInstance('4915100000202');
    const platformId = await emulator.sendText('4915100000202', '4917612345002', 'Lia', 'by lid', { viaLid: true });
    const message = await receivedNow(id, 1);
    expect(message.from).toBe('4917612345002');
    expect((await stack.call(`/v1/mark_read?instance_id=${id}&message_id=${message.message_id as string}`)).status).toBe(200);
    const read = await eventually(
      async () => emulator.clientReceipts().find((receipt) => receipt.type === 'read' && receipt.ids.includes(platformId)),
      (receipt) => receipt !== undefined,
    );
    expect(read?.to).toMatch(/@lid$/);
  });

  it('downloads and decrypts received media: an image, a document with its file name, a sticker', async () => {
    const id = await linkedInstance('4915100000203');
    await emulator.sendMedia('4915100000203', '4917612345003', 'Ana', { kind: 'image', data: PNG, mimetype: 'image/png', caption: 'look' });
    const image = await receivedNow(id, 1);
    expect(image).toMatchObject({ text: 'look', media: { mimetype: 'image/png', filename: null, size: PNG.length } });
    const png = await media(id, image.message_id as string);
    expect([png.status, png.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect(Buffer.from(await png.arrayBuffer())).toEqual(PNG);

    const pdf = Buffer.from('%PDF-1.4 the signed contract\n%%EOF\n');
    await emulator.sendMedia('4915100000203', '4917612345003', 'Ana', {
      kind: 'document',
      data: pdf,
      mimetype: 'application/pdf',
      fileName: 'Vertrag März.pdf',
    });
    const doc = await receivedNow(id, 2);
    expect(doc.media).toMatchObject({ mimetype: 'application/pdf', filename: 'Vertrag März.pdf', size: pdf.length });
    const file = await media(id, doc.message_id as string);
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="Vertrag M_rz.pdf"; filename*=UTF-8''Vertrag%20M%C3%A4rz.pdf`);
    expect(Buffer.from(await file.arrayBuffer())).toEqual(pdf);

    const webp = Buffer.from('RIFF\u0000\u0000\u0000\u0000WEBPVP8 sticker');
    await emulator.sendMedia('4915100000203', '4917612345003', 'Ana', { kind: 'sticker', data: webp, mimetype: 'image/webp' });
    const sticker = await receivedNow(id, 3);
    expect(sticker.media).toMatchObject({ mimetype: 'image/webp' });
    expect(Buffer.from(await (await media(id, sticker.message_id as string)).arrayBuffer())).toEqual(webp);
  });

  it('answers 413 for media over the cap (announced or not), 404 for a text message, 400 for a bad id', async () => {
    const id = await linkedInstance('4915100000204');
    const big = Buffer.alloc(CAP + 100, 1);
    await emulator.sendMedia('4915100000204', '4917612345004', 'Ana', { kind: 'video', data: big, mimetype: 'video/mp4' });
    await emulator.sendMedia('4915100000204', '4917612345004', 'Ana', { kind: 'audio', data: big, mimetype: 'audio/ogg', announcedLength: 10 });
    await emulator.sendText('4915100000204', '4917612345004', 'Ana', 'just text');
    const [video, audio, text] = [await receivedNow(id, 1), await receivedNow(id, 2), await receivedNow(id, 3)];
    expect([video.media, audio.media, text.media]).toEqual([expect.objectContaining({ mimetype: 'video/mp4' }), expect.objectContaining({ size: 10 }), null]);
    for (const message of [video, audio]) {
      const r = await media(id, message.message_id as string);
      expect([r.status, ((await r.json()) as { code: string }).code]).toEqual([413, 'media_too_large']);
    }
    const none = await media(id, text.message_id as string);
    expect([none.status, ((await none.json()) as { code: string }).code]).toEqual([404, 'no_media']);
    const bad = await media(id, 'in_xyz');
    expect([bad.status, ((await bad.json()) as { code: string }).code]).toEqual([400, 'invalid_request']);
  });
});
