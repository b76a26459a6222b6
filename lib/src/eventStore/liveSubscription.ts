import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../log';
import type { Delivery, Subscription } from './port';

/** What a live subscription is made of: ordered consumers of its pattern, and the log's end for it. */
export interface LiveSource {
  /** An ordered consumer's messages, from the stream sequence `from` on. */
  open(from: number): Promise<ConsumerMessages>;
  /** The last sequence of the log that the subscription's pattern matches (0: none). */
  end(): Promise<number>;
}

/** How often a quiet subscription checks that the log has not moved on without it (default). */
export const LIVE_CHECK_MS = 5_000;

/**
 * A live (non-durable) subscription that does not stop for good when its ordered consumer does. The client's ordered
 * consumer is meant to recreate itself, but on a 3-node cluster whose stream leader node was SIGKILLed and restarted
 * 12 to 21 of 30 stayed silent for good, no error, no end (nats-server 2.12.15, @nats-io/jetstream 3.4: see
 * `liveSubscription.cluster.int.test.ts`); a read model following the log stopped there. So a subscription that has
 * heard nothing for a whole `checkMs` while waiting on the server asks the log's end for its pattern (one small
 * request; none while commits arrive), and if the log holds commits it has not delivered, replaces its consumer with
 * a new one from the next sequence: nothing missed, nothing twice. A quiet log costs one request per `checkMs`.
 */
/** Pauses between tries to open a replaced consumer (NATS failing over): 0.25 s, doubling, at most 5 s. */
const REOPEN_FIRST_MS = 250;
const REOPEN_MAX_MS = 5_000;

/** A replacement consumer, tried until one opens (a cluster electing a leader answers nothing for seconds) or `closed`. */
const reopen = async (source: LiveSource, from: number, closed: () => boolean): Promise<ConsumerMessages | null> => {
  for (let pause = REOPEN_FIRST_MS; !closed(); pause = Math.min(pause * 2, REOPEN_MAX_MS)) {
    try {
      return await source.open(from);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, pause).unref());
    }
  }
  return null;
};

export const openLiveSubscription = async (
  source: LiveSource,
  from: number,
  decode: (m: JsMsg) => Delivery,
  checkMs: number,
  logger: Logger | undefined,
): Promise<Subscription> => {
  let current = await source.open(from);
  let closed = false;
  let next = from;
  return {
    async *[Symbol.asyncIterator]() {
      while (!closed) {
        const messages = current;
        // Only time spent waiting on the server counts, not a reader holding a commit.
        let waiting = true;
        let heard = false;
        let checking = false;
        let stalled = false;
        const watchdog = setInterval(() => {
          if (!waiting || heard || checking) {
            heard = false;
            return;
          }
          checking = true;
          const expected = next;
          void source
            .end()
            .then((end) => {
              if (end < expected || expected !== next || closed) return;
              stalled = true;
              messages.stop();
            })
            .catch(() => undefined)
            .finally(() => (checking = false));
        }, checkMs);
        try {
          for await (const m of messages) {
            waiting = false;
            heard = true;
            next = m.seq + 1;
            yield decode(m);
            waiting = true;
          }
        } catch (error) {
          if (!stalled) throw error;
        } finally {
          clearInterval(watchdog);
          messages.stop();
        }
        if (!stalled || closed) return;
        logger?.warn({ from: next }, 'a live subscription heard nothing while the log moved on (its consumer went away with a NATS node); opening it again');
        const reopened = await reopen(source, next, () => closed);
        if (!reopened) return;
        current = reopened;
        if (closed) current.stop();
      }
    },
    // stop(), not close(): close() waits for the iteration to end, which a paused reader never does.
    close: async () => {
      closed = true;
      current.stop();
    },
  };
};
