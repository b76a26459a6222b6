import { AppError } from '../errors';
import { MAX_MESSAGE_BYTES } from './messageSize';

/**
 * How many encoded bytes a frame of the Call stream carries before the rest of a turn's calls go in the next one:
 * a turn may batch several large replies (history pages), and a frame must stay within MAX_MESSAGE_BYTES.
 */
export const FRAME_BYTES = 1024 * 1024;

/**
 * What an item adds to a frame beyond its payload and texts, at most: a tag and a length (or varint) of up to 6
 * bytes each for the item, its id, and its payload or its error and the error's three strings and wait (42 bytes at most).
 */
const ITEM_OVERHEAD = 64;

/**
 * The encoded size of a frame's item, at most, from its parts: its payload (a request or reply message) and texts (a
 * method name, an error's fields).
 */
export const itemBytes = (...parts: Array<Uint8Array | string | null | undefined>): number => {
  let bytes = ITEM_OVERHEAD;
  for (const part of parts) bytes += typeof part === 'string' ? Buffer.byteLength(part) : (part?.length ?? 0);
  return bytes;
};

/** Whether an item of `bytes` (itemBytes) can travel at all: alone in a frame, within MAX_MESSAGE_BYTES. */
export const fitsAFrame = (bytes: number): boolean => bytes <= MAX_MESSAGE_BYTES;

/**
 * The error of a call whose request or reply is too large for a frame: that call fails, never the stream (a frame
 * past MAX_MESSAGE_BYTES would be refused by the receiver, failing every call the stream carries).
 */
export const tooLargeForFrame = (what: 'request' | 'reply', method: string, bytes: number): AppError =>
  what === 'request'
    ? new AppError('too_large', 'request_too_large', `The ${method} request (${bytes} bytes) is larger than a call may carry (${MAX_MESSAGE_BYTES} bytes)`)
    : // A bug of the method (its answer must be paged), not of the request: internal, logged as an error.
      new AppError('internal', 'response_too_large', `The ${method} answer (${bytes} bytes) is larger than a call may carry (${MAX_MESSAGE_BYTES} bytes)`);

/**
 * Splits one turn's items into frames of at most `limit` bytes each (sizeOf: itemBytes); an item larger than that
 * travels alone, so with items that fit a frame (fitsAFrame) no frame passes MAX_MESSAGE_BYTES. Order is kept.
 */
export const framesOf = <T>(items: T[], sizeOf: (item: T) => number, limit = FRAME_BYTES): T[][] => {
  const frames: T[][] = [];
  let frame: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (frame.length > 0 && bytes + size > limit) {
      frames.push(frame);
      frame = [];
      bytes = 0;
    }
    frame.push(item);
    bytes += size;
  }
  if (frame.length > 0) frames.push(frame);
  return frames;
};
