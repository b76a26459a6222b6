import type { HistoryPage } from './historyQuery';

/** How long a paused scan waits for its next page, and how many wait at once (the oldest is closed first). */
const KEEP_MS = 5_000;
const MAX_OPEN = 64;

type Scan = AsyncGenerator<HistoryPage>;

export interface OpenScansOptions {
  keepMs: number;
  maxOpen: number;
}

/**
 * History scans paused between pages, by the request that would continue them (filters, page size, cursor). A client
 * paging through a history asks for the next page right away; continuing the open scan saves a new store read per
 * page (an ordered consumer: its creation and its first batch): `BENCH_ONLY=history npm run bench` measured pages
 * of 1000 at 8.9k events/s with a scan per page, beside 30.8k for the export's single scan (2026-11-23, load 12).
 */
export class OpenScans {
  private readonly open = new Map<string, { scan: Scan; timer: NodeJS.Timeout }>();

  constructor(private readonly options: OpenScansOptions = { keepMs: KEEP_MS, maxOpen: MAX_OPEN }) {}

  /** The scan waiting for this request, taken out of the cache, or undefined. */
  take(key: string): Scan | undefined {
    const entry = this.open.get(key);
    if (!entry) return undefined;
    this.open.delete(key);
    clearTimeout(entry.timer);
    return entry.scan;
  }

  /** Keeps a scan for the request that continues it; closed after keepMs unused. */
  keep(key: string, scan: Scan): void {
    // The same page asked for twice (a console refreshing it, two clients paging alike) leaves two scans for one
    // key: the one kept before is closed here, or its store read would stay open with nothing left to close it.
    const previous = this.take(key);
    if (previous !== scan) this.end(previous);
    if (this.open.size >= this.options.maxOpen) this.close(this.open.keys().next().value!);
    const entry = {
      scan,
      // Closes this entry only: a later scan kept under the same key has its own time.
      timer: setTimeout(() => {
        if (this.open.get(key) === entry) this.close(key);
      }, this.options.keepMs),
    };
    entry.timer.unref();
    this.open.set(key, entry);
  }

  closeAll(): void {
    for (const key of [...this.open.keys()]) this.close(key);
  }

  private close(key: string): void {
    this.end(this.take(key));
  }

  private end(scan: Scan | undefined): void {
    // Ending a scan stops its store read; an error from a read already broken has nobody to go to.
    void scan?.return(undefined).catch(() => undefined);
  }
}
