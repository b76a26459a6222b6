import { InMemoryEventStore, type Subscription, type SubscribeOptions } from '@wagw/lib';

/**
 * An in-memory log whose deliveries to subscribers (a read model's folding) can lag the log, as over NATS: held back
 * from `hold()` until `letGo()`, and each delayed by `delayMs` (0: at once, as the plain in-memory store delivers).
 */
export class LaggingStore extends InMemoryEventStore {
  delayMs = 0;
  private opened: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;

  hold(): void {
    this.opened = new Promise((resolve) => (this.open = resolve));
  }

  letGo(): void {
    this.open();
  }

  override async subscribe(pattern: string, options?: SubscribeOptions): Promise<Subscription> {
    const inner = await super.subscribe(pattern, options);
    const opened = (): Promise<void> => this.opened;
    const delay = (): number => this.delayMs;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const delivery of inner) {
          await opened();
          if (delay() > 0) await new Promise((resolve) => setTimeout(resolve, delay()));
          yield delivery;
        }
      },
      close: () => inner.close(),
    };
  }
}
