import type { Consumer, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../log';
import type { Delivery, Subscription } from './port';

const FETCH_EXPIRES_MS = 1_000;
const FETCH_RETRY_MS = 250;

/**
 * A durable subscription: a pump makes bounded pulls (one at a time, each ending when full or after
 * FETCH_EXPIRES_MS, the next one only once the reader has taken most of the last) into a queue the reader takes
 * from. Closing stops the pulls, lets the one under way finish (everything the server sent is received: nothing is
 * stranded in a dropped inbox until the ack wait runs out, which is what `consume()` does when it stops), hands
 * back at once what the reader did not take, and ends the iteration. Failed pulls (NATS restarting) are retried.
 */
export const durableSubscription = (
  consumer: Consumer,
  batch: number,
  decode: (m: JsMsg) => Delivery,
  recreate: () => Promise<Consumer>,
  logger: Logger | undefined,
): Subscription => {
  const queue: JsMsg[] = [];
  let wakeReader: (() => void) | null = null;
  let wakePump: (() => void) | null = null;
  let closed = false;
  let ended = false;
  const pump = async (): Promise<void> => {
    let failures = 0;
    while (!closed) {
      if (queue.length >= batch) {
        await new Promise<void>((resolve) => (wakePump = resolve));
        continue;
      }
      try {
        const messages = await consumer.fetch({ max_messages: batch, expires: FETCH_EXPIRES_MS });
        failures = 0;
        for await (const m of messages) {
          queue.push(m);
          wakeReader?.();
        }
      } catch (error) {
        if (closed) break;
        if (failures++ === 0) logger?.warn({ err: error }, 'pulling from a durable consumer failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, FETCH_RETRY_MS).unref());
        // A consumer deleted from outside is created again (from its durable settings) after repeated failures.
        if (failures % 20 === 0) consumer = await recreate().catch(() => consumer);
      }
    }
  };
  const pumping = pump();
  return {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const m = queue.shift();
        if (!m) {
          if (ended) return;
          await new Promise<void>((resolve) => (wakeReader = resolve));
          wakeReader = null;
          continue;
        }
        if (queue.length < batch / 2) wakePump?.();
        let delivery: Delivery;
        try {
          delivery = decode(m);
        } catch (error) {
          // Not a commit (written by something else): it would fail the same way every time.
          logger?.error({ err: error, subject: m.subject, seq: m.seq }, 'skipping a message that is not a commit');
          m.term();
          continue;
        }
        yield delivery;
      }
    },
    close: async () => {
      if (closed) return;
      closed = true;
      wakePump?.();
      await pumping;
      for (const m of queue.splice(0)) m.nak();
      ended = true;
      wakeReader?.();
    },
  };
};
