import { normalizeMessageContent, proto, type WAMessage } from '@whiskeysockets/baileys';
import { encryptMedia, startMediaHost, type MediaHost } from '../../../../../test/emulator/mediaHost';
import { MediaUnavailable } from '../port';
import { inboundRefOf as refOfKeyAndContent, parseInboundRef } from './inboundRef';
import { downloadMedia, mediaUrlOf } from './mediaDownload';
import { mediaAgentFor } from './socket';

/** The ref the connector keeps of a received message. */
const inboundRefOf = (message: WAMessage): string => refOfKeyAndContent(message.key, normalizeMessageContent(message.message));

const PHOTO = Buffer.from('a photo of exactly forty-one bytes, really');

/** A received image message whose file the media host keeps, encrypted as a phone encrypts it. */
const imageMessage = async (host: MediaHost, data = PHOTO, fileLength = data.length): Promise<WAMessage> => {
  const { mediaKey, encrypted, fileSha256, fileEncSha256 } = await encryptMedia(data, 'image');
  const upload = host.put('image', encrypted);
  return {
    key: { remoteJid: '15550002222@s.whatsapp.net', fromMe: false, id: 'IMG1' },
    message: proto.Message.fromObject({
      imageMessage: { url: upload.url, directPath: upload.directPath, mediaKey, mimetype: 'image/png', fileSha256, fileEncSha256, fileLength },
    }),
  };
};

const reasonOf = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'resolved',
    (error: unknown) => (error instanceof MediaUnavailable ? error.reason : String(error)),
  );

describe('received media: the ref kept of a message, and its download', () => {
  let host: MediaHost;

  beforeAll(async () => {
    host = await startMediaHost({ maxUploadBytes: 1 << 20, maxStoredBytes: 1 << 22 });
  });

  afterAll(() => host.close());

  it('keeps the key and the media fields of a message, and nothing for text', async () => {
    const ref = parseInboundRef(inboundRefOf(await imageMessage(host)));
    expect(ref.key).toEqual({ remoteJid: '15550002222@s.whatsapp.net', id: 'IMG1', participant: null });
    expect(ref.media).toMatchObject({ kind: 'image', mimetype: 'image/png', fileName: null, fileLength: PHOTO.length });
    const text = parseInboundRef(inboundRefOf({ key: { remoteJid: '1@s.whatsapp.net', id: 'T1' }, message: { conversation: 'hi' } }));
    expect(text.media).toBeNull();
    expect(() => parseInboundRef('{"key":{}}')).toThrow('not a WhatsApp message reference');
  });

  it('fetches a file from the host its URL names and decrypts it', async () => {
    const { media } = parseInboundRef(inboundRefOf(await imageMessage(host)));
    const agent = mediaAgentFor({ mediaTlsCa: host.caPem });
    expect(await downloadMedia(media!, 1_000, agent)).toEqual({ data: PHOTO, mimetype: 'image/png', filename: null });
    expect(mediaUrlOf({ directPath: '/v/t62/x.enc', url: null })).toBe('https://mmg.whatsapp.net/v/t62/x.enc');
  });

  it('refuses a file over the cap, announced or not, one gone from the host, and one whose key does not fit', async () => {
    const agent = mediaAgentFor({ mediaTlsCa: host.caPem });
    const big = Buffer.alloc(5_000, 7);
    const announced = parseInboundRef(inboundRefOf(await imageMessage(host, big))).media!;
    expect(await reasonOf(downloadMedia(announced, 1_000, agent))).toBe('too_large');
    // The sender announced less than it sent: the fetch stops once the encrypted bytes pass the cap.
    const understated = parseInboundRef(inboundRefOf(await imageMessage(host, big, 10))).media!;
    expect(await reasonOf(downloadMedia(understated, 1_000, agent))).toBe('too_large');
    const gone = { ...announced, directPath: '/v/t62.emu/none.enc' };
    expect(await reasonOf(downloadMedia(gone, 10_000, agent))).toBe('expired');
    const wrongKey = { ...announced, mediaKey: Buffer.alloc(32, 1).toString('base64') };
    expect(await reasonOf(downloadMedia(wrongKey, 10_000, agent))).toBe('failed');
    expect((await downloadMedia(announced, 10_000, agent)).data).toEqual(big);
  });
});
