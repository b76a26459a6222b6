import type { Commit, EventStore } from '@wagw/lib';
import { instanceDeliveriesPattern } from '../delivery/events';
import { foldDelivery, upcastDelivery, type Delivery } from '../delivery/state';

/** A delivery as its records stand now, with its stream's version and the sequence it was created at. */
export interface ScannedDelivery {
  delivery: Delivery;
  /** Sequence of the stream's last commit (the expected version of a command on it). */
  version: number;
  /** Sequence of its first commit: the order of the listing (newest first). */
  createdAt: number;
}

export interface ScanRequest {
  /** Only deliveries created before this sequence (a page's cursor); Infinity = all. */
  before: number;
  /** How many to find. */
  count: number;
  want: (delivery: Delivery) => boolean;
}

/** Sequences the first window goes back; each next one goes back twice as far (up to MAX_WINDOW). */
const FIRST_WINDOW = 4_096;
const MAX_WINDOW = 1 << 20;

/**
 * An instance's deliveries, newest first, each folded from all of its records: the delivery store is read backwards
 * in growing windows of sequences, from its end, until `count` wanted deliveries created before `before` are found
 * or the log's start is reached. A delivery is complete once the window holding its first record is read (its later
 * records are newer, so they were read first). What is read is bounded by how far back the page is, not by the
 * store's size (the listing used to read only the oldest 20,000 records, so a busy instance never showed its newest
 * deliveries).
 */
export const scanNewestDeliveries = async (store: EventStore, instanceId: string, request: ScanRequest): Promise<ScannedDelivery[]> => {
  const pattern = instanceDeliveriesPattern(instanceId);
  const end = await store.version(pattern);
  /** Records read, by stream, of deliveries whose first record is not read yet. */
  const open = new Map<string, Commit[]>();
  const items: ScannedDelivery[] = [];
  let to = end + 1;
  let window = FIRST_WINDOW;
  while (to > 1 && items.length < request.count) {
    const from = Math.max(1, to - window);
    const read: Commit[] = [];
    for await (const commit of store.scanPattern(pattern, from)) {
      if (commit.sequence >= to) break;
      read.push(commit);
    }
    const created: Array<{ stream: string; sequence: number }> = [];
    for (let i = read.length - 1; i >= 0; i--) {
      const commit = read[i]!;
      const commits = open.get(commit.stream) ?? [];
      commits.unshift(commit);
      open.set(commit.stream, commits);
      if (commit.events.some((e) => e.type === 'DeliveryScheduled')) created.push({ stream: commit.stream, sequence: commit.sequence });
    }
    for (const { stream, sequence } of created) {
      const commits = open.get(stream)!;
      open.delete(stream);
      if (sequence >= request.before || items.length >= request.count) continue;
      const delivery = foldDelivery(commits.flatMap((c) => c.events.map(upcastDelivery)));
      if (delivery.exists && request.want(delivery)) items.push({ delivery, version: commits[commits.length - 1]!.sequence, createdAt: sequence });
    }
    to = from;
    window = Math.min(window * 2, MAX_WINDOW);
  }
  return items;
};
