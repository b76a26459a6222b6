import type { DeliveryClient, DeliveryOutcome } from '@wagw/lib';

/**
 * A delivery client that records every body POSTed and answers as the test says: at once (`auto`), or, with `auto`
 * null, only when `answer` is called, so a test can let something happen while an attempt is in flight.
 */
export class GatedClient implements DeliveryClient {
  readonly posted: string[] = [];
  auto: DeliveryOutcome | null = { kind: 'delivered', status: 200, durationMs: 1 };
  private readonly waiting: Array<(outcome: DeliveryOutcome) => void> = [];

  async deliver(_url: string, body: string): Promise<DeliveryOutcome> {
    this.posted.push(body);
    if (this.auto) return this.auto;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Answers the oldest attempt still waiting; false when none waits. */
  answer(outcome: DeliveryOutcome): boolean {
    const next = this.waiting.shift();
    next?.(outcome);
    return next !== undefined;
  }

  async close(): Promise<void> {
    this.waiting.splice(0).forEach((resolve) => resolve({ kind: 'retry', error: 'closed', durationMs: 0 }));
  }
}
