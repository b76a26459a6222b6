import { createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto';
import { get, type Agent } from 'node:https';
import { getMediaKeys } from '@whiskeysockets/baileys';
import { MediaUnavailable, type MediaDownload } from '../port';
import type { RefMedia } from './inboundRef';

/** WhatsApp's media host, for a message that names only a path. */
const DEFAULT_MEDIA_HOST = 'mmg.whatsapp.net';
/** The encrypted file ends with the first 10 bytes of HMAC-SHA256(iv ‖ ciphertext). */
const MAC_BYTES = 10;
/** AES-CBC pads the plaintext to the next 16 bytes. */
const PADDING_BYTES = 16;
const TIMEOUT_MS = 30_000;

/** Where the encrypted file is: the path on the host the message's URL names (WhatsApp's own host by default). */
export const mediaUrlOf = (media: Pick<RefMedia, 'directPath' | 'url'>): string => {
  if (media.directPath) {
    const host = media.url ? new URL(media.url).host : DEFAULT_MEDIA_HOST;
    return `https://${host}${media.directPath}`;
  }
  if (media.url) return media.url;
  throw new MediaUnavailable('failed', 'The message names no place its media can be fetched from');
};

/** The encrypted file, refused as soon as it passes `maxEncryptedBytes`. */
const fetchEncrypted = (url: string, maxEncryptedBytes: number, agent: Agent | undefined): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const request = get(url, { agent, timeout: TIMEOUT_MS, headers: { Origin: 'https://web.whatsapp.com' } }, (response) => {
      const status = response.statusCode ?? 0;
      if (status === 404 || status === 410) {
        response.resume();
        return reject(new MediaUnavailable('expired', 'WhatsApp no longer has this media (its files expire after some weeks)'));
      }
      if (status !== 200) {
        response.resume();
        return reject(new MediaUnavailable('failed', `WhatsApp's media host answered ${status}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxEncryptedBytes) {
          request.destroy();
          reject(new MediaUnavailable('too_large', 'The media is larger than the download cap'));
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => resolve(Buffer.concat(chunks)));
      response.on('error', (error) => reject(new MediaUnavailable('failed', `Fetching the media failed: ${error.message}`)));
    });
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', (error) =>
      reject(error instanceof MediaUnavailable ? error : new MediaUnavailable('failed', `Fetching the media failed: ${error.message}`)),
    );
  });

/** The plaintext of an encrypted WhatsApp file: the MAC checked first (a wrong key or a damaged file fails). */
export const decryptMediaFile = async (encrypted: Buffer, mediaKey: Buffer, kind: RefMedia['kind']): Promise<Buffer> => {
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, kind);
  if (encrypted.length <= MAC_BYTES || !macKey) throw new MediaUnavailable('failed', 'The media file is damaged');
  const body = encrypted.subarray(0, -MAC_BYTES);
  const mac = createHmac('sha256', macKey).update(iv).update(body).digest().subarray(0, MAC_BYTES);
  if (!timingSafeEqual(mac, encrypted.subarray(-MAC_BYTES))) throw new MediaUnavailable('failed', 'The media file does not match its key');
  try {
    const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
    return Buffer.concat([decipher.update(body), decipher.final()]);
  } catch {
    throw new MediaUnavailable('failed', 'The media file cannot be decrypted');
  }
};

/**
 * Fetches and decrypts received media, within `maxBytes` of plaintext: refused before any fetch when the sender
 * announced more, and while fetching once the encrypted bytes pass what that much plaintext can take.
 */
export const downloadMedia = async (media: RefMedia, maxBytes: number, agent: Agent | undefined): Promise<MediaDownload> => {
  if (media.fileLength > maxBytes) throw new MediaUnavailable('too_large', `The media is ${media.fileLength} bytes, over the ${maxBytes}-byte download cap`);
  const encrypted = await fetchEncrypted(mediaUrlOf(media), maxBytes + PADDING_BYTES + MAC_BYTES, agent);
  const data = await decryptMediaFile(encrypted, Buffer.from(media.mediaKey, 'base64'), media.kind);
  if (data.length > maxBytes) throw new MediaUnavailable('too_large', `The media is over the ${maxBytes}-byte download cap`);
  return { data, mimetype: media.mimetype, filename: media.fileName };
};
