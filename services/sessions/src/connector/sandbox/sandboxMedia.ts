import { WHATSAPP_FILE_MAX_BYTES, SANDBOX_MEDIA_KINDS, type SandboxMediaKind } from '@wagw/lib';
import { MediaUnavailable, type MediaDownload } from '../port';

export { SANDBOX_MEDIA_KINDS, type SandboxMediaKind };

/** The largest file a simulated contact sends (a document the size WhatsApp allows, 100 MB). */
export const SANDBOX_MEDIA_MAX_BYTES = WHATSAPP_FILE_MAX_BYTES;

/** A 1×1 PNG: what a simulated contact's photo looks like. */
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

const KINDS: Record<SandboxMediaKind, { mimetype: string; filename: string | null; head: Buffer }> = {
  image: { mimetype: 'image/png', filename: null, head: PNG },
  video: { mimetype: 'video/mp4', filename: null, head: Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex') },
  audio: { mimetype: 'audio/ogg; codecs=opus', filename: null, head: Buffer.from('OggS') },
  document: { mimetype: 'application/pdf', filename: 'sandbox.pdf', head: Buffer.from('%PDF-1.4\n% sandbox document\n') },
  sticker: { mimetype: 'image/webp', filename: null, head: Buffer.from('RIFF\0\0\0\0WEBPVP8 ') },
};

/** What an inbound message's media is in the sandbox: its kind and size; the bytes are made from them when fetched. */
export interface SandboxMediaRef {
  kind: SandboxMediaKind;
  /** Bytes (at least the kind's header). */
  size: number;
  /** Names the file (documents) and seeds its filler, so two messages' files differ. */
  seed: string;
}

/** The descriptor an inbound message reports for sandbox media. */
export const sandboxMediaInfo = (media: SandboxMediaRef): { mimetype: string; filename: string | null; size: number } => ({
  mimetype: KINDS[media.kind].mimetype,
  filename: KINDS[media.kind].filename,
  size: Math.max(media.size, KINDS[media.kind].head.length),
});

/**
 * The file of a simulated contact's message: the kind's header, then filler made from the seed up to the size.
 * Made on demand rather than stored, so every replica serves the same file and nothing needs cleaning up.
 */
export const sandboxMediaFile = (media: SandboxMediaRef, maxBytes: number): MediaDownload => {
  const { mimetype, filename, head } = KINDS[media.kind];
  const size = Math.max(media.size, head.length);
  if (size > maxBytes) throw new MediaUnavailable('too_large', `The media is ${size} bytes, over the ${maxBytes}-byte download cap`);
  const data = Buffer.alloc(size);
  head.copy(data);
  const filler = Buffer.from(` ${media.seed}`);
  for (let at = head.length; at < size; at += filler.length) filler.copy(data, at, 0, Math.min(filler.length, size - at));
  return { data, mimetype, filename };
};
