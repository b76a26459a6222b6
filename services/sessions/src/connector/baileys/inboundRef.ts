import { toNumber, type proto, type WAMessageKey } from '@whiskeysockets/baileys';

/** The kinds of received media WhatsApp encrypts with a media key (each derives its keys with its own HKDF info). */
export type InboundMediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** Where a received file lives and how to decrypt it: the media fields of its message. */
export interface RefMedia {
  kind: InboundMediaKind;
  /** base64 */
  mediaKey: string;
  directPath: string | null;
  url: string | null;
  mimetype: string;
  fileName: string | null;
  /** The plaintext size the sender announced (0 when unknown). */
  fileLength: number;
}

/**
 * What the connector keeps of a received message to act on it later: its key (a read receipt names the chat, the
 * message and, in groups, the participant) and its media fields (`downloadMedia`). Opaque to the rest of the
 * service; stored beside the message, never in the event log (the media key decrypts the file).
 */
export interface InboundRef {
  key: { remoteJid: string; id: string; participant: string | null };
  media: RefMedia | null;
}

const FIELDS: ReadonlyArray<[InboundMediaKind, 'imageMessage' | 'videoMessage' | 'audioMessage' | 'documentMessage' | 'stickerMessage', string]> = [
  ['image', 'imageMessage', 'image/jpeg'],
  ['video', 'videoMessage', 'video/mp4'],
  ['audio', 'audioMessage', 'audio/ogg'],
  ['document', 'documentMessage', 'application/octet-stream'],
  ['sticker', 'stickerMessage', 'image/webp'],
];

/** A text field as we keep it: null when empty. */
export const nonEmpty = (value: string | null | undefined): string | null => (value ? value : null);

type MediaMessage = NonNullable<proto.IMessage[(typeof FIELDS)[number][1]]>;

/** The file a message's content carries (the first media field set), its kind and the mimetype to assume without one. */
export const mediaFieldOf = (content: proto.IMessage): { kind: InboundMediaKind; media: MediaMessage; fallback: string } | null => {
  for (const [kind, field, fallback] of FIELDS) {
    const media = content[field];
    if (media) return { kind, media, fallback };
  }
  return null;
};

/** The media fields of a message's content, when it carries a file with a media key. */
export const refMediaOf = (content: proto.IMessage | null | undefined): RefMedia | null => {
  const found = content ? mediaFieldOf(content) : null;
  if (!found) return null;
  const { kind, media, fallback } = found;
  if (!media.mediaKey || media.mediaKey.length === 0) return null;
  return {
    kind,
    mediaKey: Buffer.from(media.mediaKey).toString('base64'),
    directPath: nonEmpty(media.directPath),
    url: nonEmpty(media.url),
    mimetype: nonEmpty(media.mimetype) ?? fallback,
    fileName: 'fileName' in media ? nonEmpty(media.fileName) : null,
    fileLength: toNumber(media.fileLength ?? 0),
  };
};

/** The ref of a received message (its key and its normalized content), as text. */
export const inboundRefOf = (key: WAMessageKey, content: proto.IMessage | null | undefined): string => {
  const ref: InboundRef = {
    key: { remoteJid: key.remoteJid ?? '', id: key.id ?? '', participant: key.participant ?? null },
    media: refMediaOf(content),
  };
  return JSON.stringify(ref);
};

const isKind = (value: unknown): value is InboundMediaKind => FIELDS.some(([kind]) => kind === value);

/** A ref this connector wrote; throws on anything else (another connector's, or damaged). */
export const parseInboundRef = (raw: string): InboundRef => {
  const parsed = JSON.parse(raw) as Partial<InboundRef>;
  const key = parsed.key;
  if (!key || typeof key.remoteJid !== 'string' || !key.remoteJid || typeof key.id !== 'string' || !key.id) {
    throw new Error('not a WhatsApp message reference');
  }
  const media = parsed.media ?? null;
  if (media !== null && (!isKind(media.kind) || typeof media.mediaKey !== 'string')) throw new Error('a WhatsApp message reference with damaged media fields');
  return { key: { remoteJid: key.remoteJid, id: key.id, participant: key.participant ?? null }, media };
};
