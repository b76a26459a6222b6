/**
 * How many encoded bytes a frame of the Call stream carries before the rest of a turn's calls go in the next one:
 * grpc-js refuses a message over 4 MiB (its default), and a turn may batch several large replies (history pages).
 */
export const FRAME_BYTES = 1024 * 1024;

/**
 * Splits one turn's items into frames of at most `limit` payload bytes each (an item larger than that travels alone,
 * as it would in a unary call). Order is kept.
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
