import { AppError } from '@wagw/lib';
import { DownloadSlots } from './downloadSlots';

describe('DownloadSlots (MEDIA_DOWNLOADS_MAX)', () => {
  it('gives out as many slots as allowed, refuses the next with 429 media_downloads_busy, and takes each back once', () => {
    const slots = new DownloadSlots(2);
    const first = slots.take();
    slots.take();
    const refused = (() => {
      try {
        slots.take();
        return null;
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(AppError);
    expect([(refused as AppError).kind, (refused as AppError).code]).toEqual(['rate_limited', 'media_downloads_busy']);
    first();
    first(); // a stream's end and its cancellation may both give it back
    slots.take();
    expect(() => slots.take()).toThrow(AppError);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new DownloadSlots(0)).toThrow(RangeError);
    expect(() => new DownloadSlots(1.5)).toThrow(RangeError);
  });
});
