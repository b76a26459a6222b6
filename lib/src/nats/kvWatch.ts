import { KvWatchInclude, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/transport-node';
import type { Logger } from '../log';
import type { NatsHandle } from './connection';
import { withNats } from './guard';

export interface KvWatchOptions {
  /** true (default): every key's current value first, then the changes; false: only the changes from now on. */
  current?: boolean;
  /** How often a quiet watch checks that the bucket has not moved on without it (default 5 s). */
  checkMs?: number;
  logger?: Logger;
}

export interface KvWatch {
  stop(): void;
  /** True from when the watch is found behind the bucket (its consumer was lost) until it has caught up again. */
  behind(): boolean;
}

const DEFAULT_CHECK_MS = 5_000;

/**
 * A watch of a whole KV bucket that does not go blind for good. The client's watch runs on a one-replica consumer,
 * which dies with its NATS node, and notices after two missed heartbeats (30 s each, whatever the watch asks for):
 * measured on a 3-node cluster, watches heard nothing for 54-82 s after their node was killed while the bucket (R3)
 * took writes; and a watch ended by a lost connection was never opened again. So a watch that has heard nothing for
 * a check (`checkMs`) reads the bucket's last revision (one small request, none while changes arrive). A bucket
 * ahead makes `behind()` true (for a caller that must refuse rather than serve what may be stale) until the watch has
 * caught up; still ahead at the next check, the watch is opened again after the last revision it delivered: nothing
 * missed, nothing twice.
 */
export const watchKvBucket = async (
  nats: NatsHandle,
  kv: KV,
  bucket: string,
  onEntry: (entry: KvWatchEntry) => void,
  options: KvWatchOptions = {},
): Promise<KvWatch> => {
  const lastRevision = async (): Promise<number> =>
    (await withNats(nats, () => nats.jsm.streams.getMessage(`KV_${bucket}`, { last_by_subj: `$KV.${bucket}.>` })))?.seq ?? 0;
  let last = 0;
  // Only the changes from now on: the client's "updates only" watch, and the bucket's last revision, to compare the
  // bucket with, read at the first check (not here: a cluster still electing its leaders at start-up answers nothing).
  let unknownStart = options.current === false;
  let stopped = false;
  let heard = false;
  let suspect = 0;
  let lagging = false;
  let current: QueuedIterator<KvWatchEntry> | null = null;

  const open = async (): Promise<void> => {
    const from = last > 0 ? { resumeFromRevision: last + 1, include: KvWatchInclude.AllHistory } : unknownStart ? { include: KvWatchInclude.UpdatesOnly } : {};
    const watch = await withNats(nats, () => kv.watch({ key: '>', ...from }));
    current = watch;
    if (stopped) watch.stop();
    void (async () => {
      for await (const entry of watch) {
        heard = true;
        unknownStart = false;
        if (entry.revision <= last) continue;
        last = entry.revision;
        if (lagging && last >= suspect) lagging = false;
        onEntry(entry);
      }
    })().catch(() => undefined);
  };

  const check = async (): Promise<void> => {
    if (heard) {
      heard = false;
      suspect = 0;
      return;
    }
    // A leader being elected answers nothing for seconds: that check just does not count, the next one asks again.
    const end = await Promise.race([lastRevision(), new Promise<null>((resolve) => setTimeout(() => resolve(null), checkMs).unref())]);
    if (end === null) return;
    if (unknownStart) {
      unknownStart = false;
      last = Math.max(last, end);
      return;
    }
    if (end <= last) {
      suspect = 0;
      lagging = false;
      return;
    }
    // Behind from now on (`behind()`: a caller refuses rather than serve what may be stale). Once, it may be a change
    // on its way (then it ends in a millisecond); still behind at the next check, with nothing heard, the watch is blind.
    lagging = true;
    const seenBefore = suspect !== 0;
    suspect = end;
    if (!seenBefore) return;
    options.logger?.warn(
      { bucket, from: last + 1, end },
      'a KV watch heard nothing while the bucket moved on (its consumer went away with a NATS node); opened again',
    );
    current?.stop();
    await open();
  };

  const checkMs = options.checkMs ?? DEFAULT_CHECK_MS;
  await open();
  let checking = false;
  const timer = setInterval(() => {
    if (stopped || checking) return;
    checking = true;
    check()
      .catch(() => undefined)
      .finally(() => (checking = false));
  }, checkMs);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
      current?.stop();
    },
    behind: () => lagging,
  };
};
