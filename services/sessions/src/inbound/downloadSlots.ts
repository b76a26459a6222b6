import { AppError, Gauge } from '@wagw/lib';

const inUse = new Gauge({ name: 'media_downloads_in_progress', help: 'Received files this replica is downloading or streaming to a gateway now' });

/**
 * How many received files one sessions replica holds at once (`MEDIA_DOWNLOADS_MAX`). Each is held whole while it is
 * fetched, checked and streamed (WhatsApp's MAC covers the whole file, so nothing unchecked is served), for as long
 * as its reader takes: without a bound, many downloads, or slow readers, would take the replica's memory and with it
 * every connection it holds. Past the bound a download answers 429 `media_downloads_busy` at once.
 */
export class DownloadSlots {
  private used = 0;

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`MEDIA_DOWNLOADS_MAX must be a positive integer, got ${max}`);
  }

  /** Takes a slot, or fails with 429 `media_downloads_busy`; the function returned gives it back (once, however often called). */
  take(): () => void {
    if (this.used >= this.max) {
      throw new AppError('rate_limited', 'media_downloads_busy', `${this.max} received files are being downloaded from this replica now; retry in a moment`);
    }
    this.used += 1;
    inUse.set(this.used);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.used -= 1;
      inUse.set(this.used);
    };
  }
}
