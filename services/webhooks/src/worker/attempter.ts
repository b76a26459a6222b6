import { Counter, Histogram, webhookHeaders, type DeliveryClient, type WebhookSecretStore } from '@wagw/lib';
import { decideAfterAttempt, type NextStep, type RetryPolicy } from '../delivery/decisions';
import type { DeliveryEvent } from '../delivery/events';
import { webhookIdOf, type Delivery } from '../delivery/state';
import type { CircuitBreaker } from './circuitBreaker';

const outcomes = new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome (delivered, retry, gone)',
  labelNames: ['outcome'] as const,
});
const deadLettered = new Counter({ name: 'webhook_dead_lettered_total', help: 'Deliveries moved to the dead-letter store' });
const latency = new Histogram({
  name: 'webhook_delivery_latency_seconds',
  help: 'From the event to its successful delivery',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300, 3600],
});

/** One signed attempt of a delivery, and the decision on what follows (the same for first attempts and retries). */
export class Attempter {
  private readonly secrets = new Map<string, string>();

  constructor(
    private readonly secretStore: WebhookSecretStore,
    private readonly client: DeliveryClient,
    private readonly breaker: CircuitBreaker,
    private readonly policy: RetryPolicy,
    private readonly workerId: string,
    private readonly now: () => Date,
  ) {}

  async attempt(
    instanceId: string,
    delivery: Delivery & { body: string },
    url: string,
  ): Promise<{ events: DeliveryEvent[]; next: NextStep; delivered: boolean; at: string }> {
    const secret = await this.secretFor(instanceId);
    const result = await this.client.deliver(url, delivery.body, webhookHeaders(secret, webhookIdOf(delivery), delivery.body, this.now()));
    this.breaker.record(instanceId, result.kind === 'delivered');
    outcomes.inc({ outcome: result.kind });
    const now = this.now();
    const decision = decideAfterAttempt(
      delivery,
      {
        url,
        worker: this.workerId,
        outcome: result.kind,
        status: result.status,
        error: result.error,
        durationMs: result.durationMs,
        retryAfterMs: result.retryAfterMs,
      },
      this.policy,
      now.toISOString(),
    );
    if (decision.events.some((e) => e.type === 'DeliveryDeadLettered')) deadLettered.inc();
    const delivered = result.kind === 'delivered';
    if (delivered) latency.observe(Math.max(0, now.getTime() - Date.parse(delivery.createdAt)) / 1000);
    return { ...decision, delivered, at: now.toISOString() };
  }

  private async secretFor(instanceId: string): Promise<string> {
    const cached = this.secrets.get(instanceId);
    if (cached) return cached;
    const secret = await this.secretStore.getOrCreate(instanceId);
    this.secrets.set(instanceId, secret);
    return secret;
  }
}
