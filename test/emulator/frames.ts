import { NOISE_WA_HEADER } from '@whiskeysockets/baileys';

/**
 * WhatsApp Web framing inside WebSocket messages: the client opens with an intro (`WA 6 2`, or `ED 0 1 <len24>
 * <routing info>` then `WA 6 2`), then every frame in either direction is `<len:24-bit BE><payload>`. A WebSocket
 * message may carry several frames or a part of one.
 */
export class FrameError extends Error {}

const MAX_FRAME = 0xffffff;

export const encodeFrame = (payload: Uint8Array): Buffer => {
  if (payload.length > MAX_FRAME) throw new FrameError(`frame of ${payload.length} bytes is too large`);
  const out = Buffer.alloc(3 + payload.length);
  out.writeUInt8(payload.length >> 16, 0);
  out.writeUInt16BE(payload.length & 0xffff, 1);
  out.set(payload, 3);
  return out;
};

export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  private introDone = false;

  constructor(private readonly maxFrameBytes: number) {}

  /** The complete frames `data` finishes; throws a FrameError on a bad intro or an oversized frame. */
  push(data: Buffer): Buffer[] {
    this.buffered = this.buffered.length === 0 ? data : Buffer.concat([this.buffered, data]);
    if (!this.introDone && !this.readIntro()) return [];
    const frames: Buffer[] = [];
    while (this.buffered.length >= 3) {
      const size = (this.buffered.readUInt8(0) << 16) | this.buffered.readUInt16BE(1);
      if (size > this.maxFrameBytes) throw new FrameError(`frame of ${size} bytes exceeds ${this.maxFrameBytes}`);
      if (this.buffered.length < 3 + size) break;
      frames.push(Buffer.from(this.buffered.subarray(3, 3 + size)));
      this.buffered = this.buffered.subarray(3 + size);
    }
    if (this.buffered.length > this.maxFrameBytes + 3) throw new FrameError('too much unframed data');
    return frames;
  }

  private readIntro(): boolean {
    let offset = 0;
    if (this.buffered.length >= 2 && this.buffered.toString('latin1', 0, 2) === 'ED') {
      if (this.buffered.length < 7) return false;
      const routingLength = (this.buffered.readUInt8(4) << 16) | this.buffered.readUInt16BE(5);
      offset = 7 + routingLength;
    }
    const header = NOISE_WA_HEADER.length;
    if (this.buffered.length < offset + header) {
      if (offset > this.maxFrameBytes) throw new FrameError('routing info too large');
      return false;
    }
    if (!this.buffered.subarray(offset, offset + header).equals(NOISE_WA_HEADER)) {
      throw new FrameError('bad intro: expected WA 6 2');
    }
    this.buffered = this.buffered.subarray(offset + header);
    this.introDone = true;
    return true;
  }
}
