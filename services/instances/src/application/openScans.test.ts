import type { HistoryPage } from './historyQuery';
import { OpenScans } from './openScans';

// The cache of history scans paused between pages: every scan it is given is closed exactly once, by time or by a
// newer scan under the same key, and a scan kept is closed no earlier than its own keep time.

const KEEP_MS = 100;

/** A paused scan that records whether it was closed (returned). */
const scan = (): { scan: AsyncGenerator<HistoryPage>; closed(): boolean } => {
  let closed = false;
  async function* pages(): AsyncGenerator<HistoryPage> {
    try {
      yield { events: [], json: [], nextSequence: 2 };
    } finally {
      closed = true;
    }
  }
  const generator = pages();
  // Started and paused at its first page, as the service keeps them.
  void generator.next();
  return { scan: generator, closed: () => closed };
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('OpenScans', () => {
  let scans: OpenScans;
  beforeEach(() => (scans = new OpenScans({ keepMs: KEEP_MS, maxOpen: 64 })));
  afterEach(() => scans.closeAll());

  it('closes the scan kept before when another is kept under the same key', async () => {
    const first = scan();
    const second = scan();
    scans.keep('page-2', first.scan);
    scans.keep('page-2', second.scan);
    await sleep(0);
    expect({ first: first.closed(), second: second.closed() }).toEqual({ first: true, second: false });
    expect(scans.take('page-2')).toBe(second.scan);
  });

  it("keeps the newer scan for its own keep time, not the replaced one's", async () => {
    const first = scan();
    const second = scan();
    scans.keep('page-2', first.scan);
    await sleep(KEEP_MS * 0.6);
    scans.keep('page-2', second.scan);
    // Past the first scan's keep time, within the second's.
    await sleep(KEEP_MS * 0.6);
    expect(second.closed()).toBe(false);
    expect(scans.take('page-2')).toBe(second.scan);
  });

  it('closes a scan nobody continues after its keep time', async () => {
    const kept = scan();
    scans.keep('page-2', kept.scan);
    await sleep(KEEP_MS * 2);
    expect(kept.closed()).toBe(true);
    expect(scans.take('page-2')).toBeUndefined();
  });
});
