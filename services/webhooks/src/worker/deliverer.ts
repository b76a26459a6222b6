import {
  AggregateCache,
  Counter,
  Histogram,
  instanceEvent,
  instanceStream,
  loadAggregate,
  webhookHeaders,
  type Decider,
  type Delivery as StoreDelivery,
  type DeliveryClient,
  type EventStore,
  type Logger,
  type Subscription,
  type WebhookSecretStore,
} from '@wagw/lib';
import { decideAfterAttempt, decideDrop, type RetryPolicy } from '../delivery/decisions';
import { ALL_DELIVERIES_PATTERN, type DeliveryEvent } from '../delivery/events';
import { evolveDelivery, initialDeliveryState, upcastDelivery, type Delivery, type DeliveryState } from '../delivery/state';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';
import type { CircuitBreaker } from './circuitBreaker';
import { Lanes } from './lanes';

export const DELIVERER_DURABLE = 'webhooks-deliverer';
const TRIGGERS = new Set(['DeliveryScheduled', 'RedeliveryRequested']);
const MAX_PER_INSTANCE = 1_000;
const HEARTBEAT_MS = 10_000;

const outcomes = new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome (delivered, retry, gone, failed)',
  labelNames: ['outcome'] as const,
});
const deadLettered = new Counter({ name: 'webhook_dead_lettered_total', help: 'Deliveries moved to the dead-letter store' });
const latency = new Histogram({
  name: 'webhook_delivery_latency_seconds',
  help: 'From the event to its successful delivery',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300, 3600],
});

/** The delivery aggregate for the shared command helpers (it has no commands of its own besides the decisions). */
export const deliveryDecider: Decider<never, DeliveryEvent, DeliveryState> = {
  decide: () => [],
  evolve: evolveDelivery,
  initialState: initialDeliveryState,
  upcast: upcastDelivery,
};

export interface DelivererOptions {
  policy: RetryPolicy;
  /** Attempts running at once over all endpoints; each instance has at most one (its deliveries stay in order). */
  concurrency: number;
  /** Names this replica in attempt records. */
  workerId: string;
  /** Jobs pulled at a time (default 256). */
  batch?: number;
  /** Redelivery time of a job held by a crashed replica; must exceed the HTTP time-out. */
  ackWaitMs: number;
  now?: () => Date;
}

/**
 * Delivers scheduled webhooks: one lane per instance (in order, a slow endpoint only delays itself), a circuit
 * breaker per instance, the retry schedule as delayed redelivery of the job, every attempt recorded.
 */
export class Deliverer {
  private subscription: Subscription | null = null;
  private readonly lanes: Lanes;
  private readonly held = new Set<StoreDelivery>();
  private readonly cache = new AggregateCache<DeliveryState>(50_000);
  private readonly secrets = new Map<string, string>();
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly now: () => Date;

  constructor(
    private readonly deliveries: EventStore,
    private readonly events: EventStore,
    private readonly endpoints: EndpointDirectory,
    private readonly secretStore: WebhookSecretStore,
    private readonly client: DeliveryClient,
    private readonly breaker: CircuitBreaker,
    private readonly logger: Logger,
    private readonly options: DelivererOptions,
  ) {
    this.lanes = new Lanes(options.concurrency);
    this.now = options.now ?? (() => new Date());
  }

  /** Deliveries held by this replica (queued or in flight). */
  get backlog(): number {
    return this.held.size;
  }

  async start(): Promise<void> {
    this.subscription = await this.deliveries.subscribe(ALL_DELIVERIES_PATTERN, { durableName: DELIVERER_DURABLE, ackWaitMs: this.options.ackWaitMs, batch: this.options.batch });
    this.heartbeat = setInterval(() => this.held.forEach((d) => d.inProgress()), HEARTBEAT_MS);
    this.heartbeat.unref();
    void this.run(this.subscription);
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.lanes.idle();
  }

  private async run(subscription: Subscription): Promise<void> {
    try {
      for await (const job of subscription) {
        if (!job.commit.events.some((e) => TRIGGERS.has(e.type))) {
          job.ack();
          continue;
        }
        const instanceId = job.commit.stream.split('.')[0]!;
        if (this.lanes.size(instanceId) >= MAX_PER_INSTANCE) {
          job.nak(1_000);
          continue;
        }
        this.held.add(job);
        this.lanes.push(instanceId, () => this.process(instanceId, job).finally(() => this.held.delete(job)));
      }
    } catch (error) {
      this.logger.error({ err: error }, 'deliverer subscription ended');
    }
  }

  private async load(job: StoreDelivery): Promise<{ state: DeliveryState; version: number }> {
    const stream = job.commit.stream;
    const first = job.commit.events[0];
    if (job.deliveryCount === 1 && first?.type === 'DeliveryScheduled' && !this.cache.get(stream)) {
      // A fresh job needs no read: its commit is the whole stream so far.
      return { state: evolveDelivery(initialDeliveryState(), upcastDelivery(first)), version: job.commit.sequence };
    }
    return loadAggregate(this.deliveries, deliveryDecider, stream, this.cache);
  }

  private async process(instanceId: string, job: StoreDelivery): Promise<void> {
    try {
      const { state, version } = await this.load(job);
      const trigger = job.commit.events.find((e) => TRIGGERS.has(e.type));
      const jobRound = trigger?.type === 'RedeliveryRequested' ? Number(trigger.data.round) : 0;
      // Done already, or superseded by a later redelivery request (that one carries the job now).
      if (!state.exists || state.status !== 'pending' || jobRound < state.round) return job.ack();
      const endpoint = this.endpoints.get(instanceId);
      if (!endpoint?.enabled || !endpoint.url) {
        await this.append(job.commit.stream, state, version, decideDrop('webhook disabled', this.now().toISOString()), `drop-${state.deliveryId}-${state.round}`);
        return job.ack();
      }
      const wait = this.breaker.waitMs(instanceId);
      if (wait > 0) return job.nak(wait + Math.floor(this.options.policy.random() * 1_000));
      await this.attempt(instanceId, job, state, version, endpoint.url);
    } catch (error) {
      this.logger.warn({ err: error, stream: job.commit.stream }, 'delivery step failed; will retry');
      job.nak(2_000);
    }
  }

  private async attempt(instanceId: string, job: StoreDelivery, delivery: Delivery, version: number, url: string): Promise<void> {
    const secret = await this.secretFor(instanceId);
    const result = await this.client.deliver(url, delivery.body, webhookHeaders(secret, delivery.deliveryId, delivery.body, this.now()));
    this.breaker.record(instanceId, result.kind === 'delivered');
    outcomes.inc({ outcome: result.kind });
    const now = this.now();
    const { events, next } = decideAfterAttempt(
      delivery,
      { url, worker: this.options.workerId, outcome: result.kind, status: result.status, error: result.error, durationMs: result.durationMs, retryAfterMs: result.retryAfterMs },
      this.options.policy,
      now.toISOString(),
    );
    const attempt = delivery.attempts.length + 1;
    await this.append(job.commit.stream, delivery, version, events, `attempt-${delivery.deliveryId}-${attempt}`);
    if (events.some((e) => e.type === 'DeliveryDeadLettered')) deadLettered.inc();
    if (result.kind === 'delivered') {
      const event = JSON.parse(delivery.body) as { timestamp: string };
      latency.observe(Math.max(0, now.getTime() - Date.parse(event.timestamp)) / 1000);
    }
    switch (next.kind) {
      case 'done':
        return job.ack();
      case 'retry':
        return job.nak(next.delayMs);
      case 'disable_webhook':
        await this.events.append(instanceStream(instanceId), [instanceEvent('WebhookDisabled', now.toISOString(), { reason: next.reason })], {
          expectedVersion: 'any',
          commandId: `gone-${delivery.deliveryId}-${attempt}`,
        });
        return job.ack();
    }
  }

  private async append(stream: string, state: DeliveryState, version: number, events: DeliveryEvent[], commandId: string): Promise<void> {
    const result = await this.deliveries.append(stream, events, { expectedVersion: version, commandId });
    this.cache.set(stream, { state: events.reduce(evolveDelivery, state), version: result.version });
  }

  private async secretFor(instanceId: string): Promise<string> {
    const cached = this.secrets.get(instanceId);
    if (cached) return cached;
    const secret = await this.secretStore.getOrCreate(instanceId);
    this.secrets.set(instanceId, secret);
    return secret;
  }
}
