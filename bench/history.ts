import { connectNats, createLogger, instanceEvent, instanceStream, JetStreamEventStore } from '@wagw/lib';
import { log, pool, startBenchNats } from './common';
import { withGateway } from './http';

export interface HistoryBenchResult {
  events: number;
  /** GET /v1/history pages of 1000, one after the other, following next_cursor. */
  pagedPerSecond: number;
  /** GET /v1/history/export, the whole history in one NDJSON response. */
  exportPerSecond: number;
  /** The same history read straight from the event store, in pages of 1000 (the reference). */
  storePerSecond: number;
}

const silent = createLogger('bench', 'silent');

/**
 * Issue 13's speed rows: one instance with a long history (BENCH_HISTORY_EVENTS, default 100,000, appended straight
 * to the event store), read over HTTP page by page and as one export, beside the store's own paged read.
 */
export const runHistoryBench = async (): Promise<HistoryBenchResult> => {
  const events = Number(process.env.BENCH_HISTORY_EVENTS ?? 100_000);
  const nats = await startBenchNats();
  try {
    return await withGateway(nats, async ({ base, headers }) => {
      const instanceId = ((await (await fetch(`${base}/create_instance`, { headers })).json()) as { instance_id: string }).instance_id;
      const handle = await connectNats({ url: nats.url, name: 'bench-history', logger: silent, timeoutMs: 30_000 });
      try {
        const store = await JetStreamEventStore.open(handle);
        const now = new Date().toISOString();
        log(`history: appending ${events} events to one instance`);
        await pool(events, 100, async (i) => {
          await store.append(instanceStream(instanceId), [instanceEvent('WebhookConfigured', now, { url: `https://h${i}.example/`, enabled: true })], {
            expectedVersion: 'any',
            commandId: `bench-${i}`,
          });
        });

        log('history: the store, pages of 1000');
        let started = performance.now();
        let read = 0;
        for (let from: number | null = 1; from !== null;) {
          const page = await store.readPattern(`${instanceId}.>`, from, 1_000);
          read += page.commits.length;
          from = page.nextSequence;
        }
        const storePerSecond = read / ((performance.now() - started) / 1000);

        log('history: GET /v1/history, pages of 1000');
        started = performance.now();
        let paged = 0;
        for (let cursor: number | null = 0, pages = 0; cursor !== null && pages < 10_000; pages++) {
          const response = await fetch(`${base}/history?instance_id=${instanceId}&limit=1000&cursor=${cursor}`, { headers });
          if (response.status !== 200) throw new Error(`history page at cursor ${cursor}: ${response.status} ${await response.text()}`);
          const page = (await response.json()) as { events: unknown[]; next_cursor: number | null };
          paged += page.events.length;
          cursor = page.next_cursor;
        }
        const pagedPerSecond = paged / ((performance.now() - started) / 1000);

        log('history: GET /v1/history/export');
        started = performance.now();
        const response = await fetch(`${base}/history/export?instance_id=${instanceId}`, { headers });
        let lines = 0;
        // Newlines counted on the bytes (a UTF-8 newline is always the byte 10): decoding and walking every character
        // of the text cost the client about as much as the gateway spent making it.
        for await (const chunk of response.body!)
          for (let at = (chunk as Uint8Array).indexOf(10); at !== -1; at = (chunk as Uint8Array).indexOf(10, at + 1)) lines++;
        const exportPerSecond = (lines - 1) / ((performance.now() - started) / 1000);
        if (paged !== events + 1 || lines - 1 !== events + 1)
          throw new Error(`history bench read ${paged} paged and ${lines - 1} exported events of ${events + 1}`);
        return { events: events + 1, pagedPerSecond, exportPerSecond, storePerSecond };
      } finally {
        await handle.close();
      }
    });
  } finally {
    await nats.stop();
  }
};
