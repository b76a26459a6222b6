import { performance } from 'node:perf_hooks';
import { isVersionConflict, type Delivery as StoreDelivery, type EventStore, type Logger, type Subscription } from '@wagw/lib';
import { deliveryEvent, deliveryStream } from '../delivery/events';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';
import { webhookEventsOf } from '../routing/webhookEvent';
import { Lanes } from './lanes';

export const ROUTER_DURABLE = 'webhooks-router';

/**
 * Reads every domain event once (a durable consumer shared by all replicas) and schedules a delivery for each
 * webhook-worthy event of an instance whose webhook is on. Scheduling is idempotent (command id and expected
 * version 0), so a commit redelivered after a crash schedules nothing twice. Events raised while the webhook is
 * off are not delivered later.
 */
export class Router {
  private subscription: Subscription | null = null;
  private readonly lanes = new Lanes(64);

  constructor(
    private readonly events: EventStore,
    private readonly deliveries: EventStore,
    private readonly endpoints: EndpointDirectory,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.subscription = await this.events.subscribe('>', { durableName: ROUTER_DURABLE, ackWaitMs: 30_000 });
    void this.run(this.subscription);
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.lanes.idle();
  }

  private async run(subscription: Subscription): Promise<void> {
    try {
      for await (const delivery of subscription) {
        const instanceId = delivery.commit.stream.split('.')[0]!;
        if (this.lanes.size(instanceId) > 1_000) {
          delivery.nak(1_000);
          continue;
        }
        const receivedAt = performance.now();
        this.lanes.push(instanceId, () => this.route(instanceId, delivery, receivedAt));
      }
    } catch (error) {
      this.logger.error({ err: error }, 'router subscription ended');
    }
  }

  private async route(instanceId: string, delivery: StoreDelivery, receivedAt: number): Promise<void> {
    try {
      const webhooks = webhookEventsOf(delivery.commit);
      if (webhooks.length === 0) return delivery.ack();
      if (!(await this.endpoints.reach(delivery.commit.sequence, receivedAt, 5_000))) return delivery.nak(1_000);
      const endpoint = this.endpoints.get(instanceId);
      if (!endpoint?.enabled || !endpoint.url) return delivery.ack();
      for (const webhook of webhooks) {
        const scheduled = deliveryEvent('DeliveryScheduled', webhook.timestamp, {
          delivery_id: webhook.id,
          instance_id: instanceId,
          event_type: webhook.type,
          body: JSON.stringify(webhook),
        });
        await this.deliveries
          .append(deliveryStream(instanceId, webhook.id), [scheduled], { expectedVersion: 0, commandId: `schedule-${webhook.id}` })
          .catch((error: unknown) => {
            if (!isVersionConflict(error)) throw error;
          });
      }
      delivery.ack();
    } catch (error) {
      this.logger.warn({ err: error, sequence: delivery.commit.sequence }, 'scheduling webhooks failed; will retry');
      delivery.nak(2_000);
    }
  }
}
