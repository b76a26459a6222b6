import {
  ContentKeys,
  InMemoryEventStore,
  InMemoryKeyBucket,
  messageEvent,
  messageStream,
  SealedEventStore,
  type EventStore,
  type MessageAccepted,
} from '@wagw/lib';

export interface SealingResult {
  /** CPU per append of one MessageAccepted with a 200-character text, µs: plain, and with its content sealed. */
  plainMicros: number;
  sealedMicros: number;
  /** CPU per read of it back, µs: plain, and opened (the key cached). */
  plainReadMicros: number;
  openedReadMicros: number;
}

const COUNT = 20_000;
const TEXT = 'x'.repeat(200);

/** CPU µs per call of `fn` over `count` calls (after a warm-up of the same size). */
const cpuMicros = async (count: number, fn: (i: number) => Promise<unknown>): Promise<number> => {
  for (let i = 0; i < count; i++) await fn(i);
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) await fn(count + i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
};

const STREAM = messageStream('BENCHSEAL0000000000A', 'm1');
const accepted = (): MessageAccepted =>
  messageEvent<MessageAccepted>('MessageAccepted', new Date().toISOString(), {
    message_id: 'm1',
    to: '4915112345678',
    type: 'text',
    text: TEXT,
    media_url: null,
    filename: null,
  });

/** Appends to one stream (the in-memory store's append is then O(1)), each with its own command id. */
const appends = (store: EventStore, run: string) => (i: number) => store.append(STREAM, [accepted()], { expectedVersion: 'any', commandId: `${run}${i}` });

/** Reads of a stream of one commit. */
const reads = async (store: EventStore): Promise<(i: number) => Promise<unknown>> => {
  await store.append(STREAM, [accepted()], { expectedVersion: 0, commandId: 'read' });
  return () => store.readStream(STREAM);
};

const sealedStore = (): EventStore => new SealedEventStore(new InMemoryEventStore(), new ContentKeys(new InMemoryKeyBucket()));

/**
 * BENCH_ONLY=http: what sealing adds to a send's acceptance, in process, on the in-memory store (no network, so the
 * difference is the encryption and the event copying alone): one append of a MessageAccepted, sealed and plain, and
 * one read of it back.
 */
export const runSealingBench = async (): Promise<SealingResult> => ({
  plainMicros: await cpuMicros(COUNT, appends(new InMemoryEventStore(), 'p')),
  sealedMicros: await cpuMicros(COUNT, appends(sealedStore(), 's')),
  plainReadMicros: await cpuMicros(COUNT, await reads(new InMemoryEventStore())),
  openedReadMicros: await cpuMicros(COUNT, await reads(sealedStore())),
});
