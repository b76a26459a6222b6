import type { proto } from '@whiskeysockets/baileys';
import { encryptMedia, type MediaHost } from './mediaHost';
import type { MediaKind } from './types';

/** A file a phone sends a companion: its kind, bytes and what the message says of it. */
export interface InboundFile {
  kind: MediaKind;
  data: Buffer;
  mimetype: string;
  fileName?: string;
  caption?: string;
  /** The size the message announces, when a test wants it to differ from the file's (a sender's lie, a cap test). */
  announcedLength?: number;
}

const FIELD: Record<MediaKind, 'imageMessage' | 'videoMessage' | 'audioMessage' | 'documentMessage' | 'stickerMessage'> = {
  image: 'imageMessage',
  video: 'videoMessage',
  audio: 'audioMessage',
  document: 'documentMessage',
  sticker: 'stickerMessage',
};

/**
 * What a phone does to send a file: encrypts it with a fresh media key, uploads it (here: straight into the loopback
 * media host) and sends a message carrying its URL, path, key and hashes, which the client downloads and decrypts.
 */
export const inboundMediaMessage = async (media: MediaHost, file: InboundFile): Promise<proto.IMessage> => {
  const { mediaKey, encrypted, fileSha256, fileEncSha256 } = await encryptMedia(file.data, file.kind);
  const upload = media.put(file.kind, encrypted);
  const fields: proto.Message.IImageMessage & proto.Message.IDocumentMessage = {
    url: upload.url,
    directPath: upload.directPath,
    mediaKey,
    mimetype: file.mimetype,
    fileSha256,
    fileEncSha256,
    fileLength: file.announcedLength ?? file.data.length,
    mediaKeyTimestamp: Math.floor(Date.now() / 1000),
  };
  if (file.caption !== undefined && file.kind !== 'audio' && file.kind !== 'sticker') fields.caption = file.caption;
  if (file.fileName !== undefined && file.kind === 'document') fields.fileName = file.fileName;
  return { [FIELD[file.kind]]: fields };
};
