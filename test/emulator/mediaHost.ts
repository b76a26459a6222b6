import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { aesDecryptWithIV, getMediaKeys, type MediaType } from '@whiskeysockets/baileys';
import { selfSignedCert } from './tlsCert';

/** One blob a client POSTed, as stored (still encrypted: AES-256-CBC ‖ 10-byte HMAC). */
export interface StoredUpload {
  mediaType: string;
  directPath: string;
  url: string;
  encrypted: Buffer;
  at: number;
}

export interface MediaHost {
  /** `127.0.0.1:PORT`, for Baileys' customUploadHosts and the media_conn answer. */
  readonly host: string;
  /** The self-signed certificate the host serves (trust it with `new https.Agent({ ca })`). */
  readonly caPem: string;
  /** The upload token media_conn hands out; uploads without it are refused. */
  readonly auth: string;
  find(directPathOrUrl: string): StoredUpload | undefined;
  /** Stores an encrypted file as if a phone had uploaded it (inbound media); the client downloads it by its URL. */
  put(mediaType: string, encrypted: Buffer): StoredUpload;
  close(): Promise<void>;
}

export interface MediaHostOptions {
  maxUploadBytes: number;
  maxStoredBytes: number;
}

const json = (status: number, body: unknown): [number, string] => [status, JSON.stringify(body)];

/**
 * The loopback HTTPS media host: Baileys POSTs encrypted media to `https://<host>/mms/<type>/<token>?auth=…` and
 * expects `{ url, direct_path }`; a GET of that path returns the blob. Storage is bounded (oldest blobs go first).
 */
export const startMediaHost = async ({ maxUploadBytes, maxStoredBytes }: MediaHostOptions): Promise<MediaHost> => {
  const { cert, key } = await selfSignedCert();
  const auth = randomBytes(16).toString('base64url');
  const blobs = new Map<string, StoredUpload>();
  let storedBytes = 0;
  let sequence = 0;
  let host = '';

  const store = (mediaType: string, encrypted: Buffer): StoredUpload => {
    sequence += 1;
    const directPath = `/v/t62.emu/${sequence}-${mediaType}.enc`;
    const upload: StoredUpload = { mediaType, directPath, url: `https://${host}${directPath}`, encrypted, at: Date.now() };
    blobs.set(directPath, upload);
    storedBytes += encrypted.length;
    for (const [path, old] of blobs) {
      if (storedBytes <= maxStoredBytes) break;
      blobs.delete(path);
      storedBytes -= old.encrypted.length;
    }
    return upload;
  };

  const server: Server = createServer({ cert, key }, (req, res) => {
    const reply = ([status, body]: [number, string]): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    };
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    if (req.method === 'GET') {
      const blob = blobs.get(url.pathname);
      if (!blob) return reply(json(404, { error: 'not found' }));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': blob.encrypted.length }).end(blob.encrypted);
      return;
    }
    const match = /^\/mms\/([a-z0-9-]+)\/[^/]+$/.exec(url.pathname);
    if (req.method !== 'POST' || !match?.[1]) return reply(json(404, { error: 'not found' }));
    if (url.searchParams.get('auth') !== auth) return reply(json(401, { error: 'bad auth' }));
    const mediaType = match[1];
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > maxUploadBytes) {
        refused = true;
        chunks.length = 0;
        reply(json(413, { error: 'too large' }));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (refused) return;
      const upload = store(mediaType, Buffer.concat(chunks));
      reply(json(200, { url: upload.url, direct_path: upload.directPath }));
    });
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    host,
    caPem: cert,
    auth,
    put: store,
    find: (directPathOrUrl) => {
      const path = directPathOrUrl.startsWith('https://') ? new URL(directPathOrUrl).pathname : (directPathOrUrl.split('?')[0] ?? '');
      return blobs.get(path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        blobs.clear();
      }),
  };
};

/**
 * Decrypts a stored blob with the message's mediaKey: HKDF-expanded keys as Baileys derives them, the 10-byte
 * HMAC-SHA256(iv ‖ ciphertext) checked first. Undefined when the key does not fit the blob.
 */
export const decryptMedia = async (encrypted: Buffer, mediaKey: Uint8Array, mediaType: MediaType): Promise<Buffer | undefined> => {
  if (encrypted.length < 10) return undefined;
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, mediaType);
  if (!macKey) return undefined;
  const body = encrypted.subarray(0, -10);
  const mac = createHmac('sha256', macKey).update(iv).update(body).digest().subarray(0, 10);
  if (!mac.equals(encrypted.subarray(-10))) return undefined;
  try {
    return aesDecryptWithIV(body, cipherKey, iv);
  } catch {
    return undefined;
  }
};

/** A file encrypted as a phone uploads it: AES-256-CBC with keys from a fresh media key, then the 10-byte MAC. */
export interface EncryptedMedia {
  mediaKey: Buffer;
  encrypted: Buffer;
  fileSha256: Buffer;
  fileEncSha256: Buffer;
}

export const encryptMedia = async (plaintext: Buffer, mediaType: MediaType): Promise<EncryptedMedia> => {
  const mediaKey = randomBytes(32);
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, mediaType);
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const mac = createHmac('sha256', macKey ?? Buffer.alloc(32))
    .update(iv)
    .update(body)
    .digest()
    .subarray(0, 10);
  const encrypted = Buffer.concat([body, mac]);
  return {
    mediaKey,
    encrypted,
    fileSha256: createHash('sha256').update(plaintext).digest(),
    fileEncSha256: createHash('sha256').update(encrypted).digest(),
  };
};
