import type { Subscription } from './port';

/**
 * The subscription with only the commits holding an event of `types` handed out (`SubscribeOptions.types`); the
 * others are acked when `durable` (nothing else would ever ack them) and dropped. Both adapters end in it.
 */
export const withTypes = (subscription: Subscription, types: readonly string[] | undefined, durable: boolean): Subscription => {
  if (!types) return subscription;
  const wanted = new Set(types);
  return {
    async *[Symbol.asyncIterator]() {
      for await (const delivery of subscription) {
        if (delivery.commit.events.some((event) => wanted.has(event.type))) yield delivery;
        else if (durable) delivery.ack();
      }
    },
    close: () => subscription.close(),
  };
};
