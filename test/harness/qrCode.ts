import jsQR from 'jsqr';
import { PNG } from 'pngjs';

/** Decodes a data:image/png;base64 QR code back to its text (null when it holds none). */
export const decodeQr = (dataUri: string): string | null => {
  const png = PNG.sync.read(Buffer.from(dataUri.replace(/^data:image\/png;base64,/, ''), 'base64'));
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data ?? null;
};
