import { Lanes, isVersionConflict, type Delivery as StoreDelivery, type EventStore, type Logger, type NewEvent } from '@wagw/lib';
import { deliveredStream, deliveryEvent, deliveryStream } from '../delivery/events';
import { evolveDelivery, initialDeliveryState, type Delivery } from '../delivery/state';
import { disableWebhook } from '../endpoints/disableWebhook';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';
import { webhookEventsOf, type WebhookEvent } from '../routing/webhookEvent';
import type { Attempter } from './attempter';
import type { CircuitBreaker } from './circuitBreaker';

const MAX_PER_INSTANCE = 1_000;

/**
 * Makes the first attempt of each webhook event of an instance whose webhook is on, one event at a time per
 * instance (the sequencer hands each instance's events to one replica, in event order). The domain event stays
 * unacked until the outcome is durable: a success is recorded on `<instance>.delivered.<id>`; anything else becomes
 * a job on `<instance>.delivery.<id>` for the deliverer (retries, dead letters). Records are idempotent (command id
 * and expected version 0), so an event redelivered after a crash records nothing twice (it may be POSTed twice: at
 * least once). Events raised while the webhook is off are not delivered, then or later.
 */
export class Router {
  private readonly lanes: Lanes;

  constructor(
    private readonly events: EventStore,
    private readonly deliveries: EventStore,
    private readonly endpoints: EndpointDirectory,
    private readonly attempter: Attempter,
    private readonly breaker: CircuitBreaker,
    private readonly logger: Logger,
    options: { concurrency: number },
  ) {
    this.lanes = new Lanes(options.concurrency);
  }

  /** Queues an event behind the instance's earlier ones (handed back when too many wait already). */
  handle(instanceId: string, delivery: StoreDelivery): void {
    if (this.lanes.size(instanceId) >= MAX_PER_INSTANCE) return delivery.nak(1_000);
    this.lanes.push(instanceId, () => this.route(instanceId, delivery));
  }

  /** Resolves when every event handed over so far has been worked on. */
  idle(): Promise<void> {
    return this.lanes.idle();
  }

  private async route(instanceId: string, delivery: StoreDelivery): Promise<void> {
    try {
      const webhooks = webhookEventsOf(delivery.commit);
      if (webhooks.length === 0) return delivery.ack();
      // An enabled endpoint is used as the read model has it (no lookup per event: the hot path). Otherwise the
      // model is first brought up to this event, so a webhook switched on just before it is not missed.
      const known = this.endpoints.get(instanceId);
      if (!known?.enabled || !known.url) {
        if (!(await this.endpoints.reach(instanceId, 5_000, delivery.commit.sequence))) return delivery.nak(1_000);
      }
      for (const webhook of webhooks) {
        const endpoint = this.endpoints.get(instanceId);
        if (!endpoint?.enabled || !endpoint.url) break;
        const heartbeat = setInterval(() => delivery.inProgress(), 10_000);
        try {
          await this.firstAttempt(instanceId, webhook, endpoint.url, delivery.deliveryCount > 1);
        } finally {
          clearInterval(heartbeat);
        }
      }
      delivery.ack();
    } catch (error) {
      this.logger.warn({ err: error, sequence: delivery.commit.sequence }, 'routing a webhook failed; will retry');
      delivery.nak(2_000);
    }
  }

  private async firstAttempt(instanceId: string, webhook: WebhookEvent, url: string, redelivered: boolean): Promise<void> {
    const scheduled = deliveryEvent('DeliveryScheduled', webhook.timestamp, {
      delivery_id: webhook.id,
      instance_id: instanceId,
      event_type: webhook.type,
      body: JSON.stringify(webhook),
    });
    // After a crash, the event may already have been handled: then there is a record of it.
    if (redelivered && (await this.recorded(instanceId, webhook.id))) return;
    if (this.breaker.waitMs(instanceId) > 0) return this.record(deliveryStream(instanceId, webhook.id), [scheduled], webhook.id);
    const delivery = evolveDelivery(initialDeliveryState(), scheduled) as Delivery;
    const { events, next, delivered, at } = await this.attempter.attempt(instanceId, delivery, url);
    if (delivered) return this.record(deliveredStream(instanceId, webhook.id), [scheduled, ...events], webhook.id);
    await this.record(deliveryStream(instanceId, webhook.id), [scheduled, ...events], webhook.id);
    if (next.kind === 'disable_webhook') {
      await disableWebhook(this.events, instanceId, url, next.reason, at, `gone-${webhook.id}-1`);
    }
  }

  private async recorded(instanceId: string, id: string): Promise<boolean> {
    const [job, done] = await Promise.all([this.deliveries.version(deliveryStream(instanceId, id)), this.deliveries.version(deliveredStream(instanceId, id))]);
    return job > 0 || done > 0;
  }

  private async record(stream: string, events: NewEvent[], id: string): Promise<void> {
    await this.deliveries.append(stream, events, { expectedVersion: 0, commandId: `record-${id}` }).catch((error: unknown) => {
      if (!isVersionConflict(error)) throw error;
    });
  }
}
