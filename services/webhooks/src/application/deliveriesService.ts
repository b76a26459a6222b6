import { assertInstanceId, invalidArgument, newCommandId, notFound, type EventStore } from '@wagw/lib';
import { decideRedelivery } from '../delivery/decisions';
import { deliveryStream, instanceDeliveriesPattern } from '../delivery/events';
import { foldDelivery, upcastDelivery, type Delivery, type DeliveryStatus } from '../delivery/state';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';

const STATUSES = new Set<string>(['pending', 'delivered', 'dead', 'dropped']);
/** How many delivery commits one listing reads at most (newest deliveries beyond it are not shown). */
const MAX_COMMITS_READ = 20_000;

/** The read and redeliver side of webhooks: an instance's deliveries with every attempt, and redelivery of failed ones. */
export class DeliveriesService {
  constructor(
    private readonly deliveries: EventStore,
    private readonly endpoints: EndpointDirectory,
  ) {}

  /** Newest first; `status` filters. */
  async list(account: string, instanceId: string, status: string, limit: number): Promise<Delivery[]> {
    await this.assertOwner(account, instanceId);
    if (status && !STATUSES.has(status)) throw invalidArgument('invalid_status', 'status must be pending, delivered, dead or dropped');
    const all = await this.readAll(instanceId);
    return all
      .filter((d) => !status || d.status === (status as DeliveryStatus))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.deliveryId.localeCompare(a.deliveryId))
      .slice(0, Math.min(Math.max(limit || 100, 1), 1_000));
  }

  /** Redelivers one dead-lettered delivery, or all of them when `deliveryId` is empty; answers the ids. */
  async redeliver(account: string, instanceId: string, deliveryId: string): Promise<string[]> {
    await this.assertOwner(account, instanceId);
    const now = new Date().toISOString();
    const all = await this.readAll(instanceId);
    const targets = deliveryId ? all.filter((d) => d.deliveryId === deliveryId) : all.filter((d) => d.status === 'dead');
    if (deliveryId && targets.length === 0) throw notFound('delivery_not_found', 'Delivery not found');
    for (const delivery of targets) {
      const stream = deliveryStream(instanceId, delivery.deliveryId);
      // Only dead deliveries can be redelivered, and those are all on job streams (delivery.<id>).
      const events = decideRedelivery(delivery, now);
      await this.deliveries.append(stream, events, { expectedVersion: await this.deliveries.version(stream), commandId: newCommandId() });
    }
    return targets.map((d) => d.deliveryId);
  }

  private async assertOwner(account: string, instanceId: string): Promise<void> {
    assertInstanceId(instanceId);
    await this.endpoints.reach(instanceId, Number.MAX_SAFE_INTEGER, 2_000);
    if (this.endpoints.get(instanceId)?.account !== account) throw notFound('instance_not_found', 'Instance not found');
  }

  private async readAll(instanceId: string): Promise<Delivery[]> {
    const page = await this.deliveries.readPattern(instanceDeliveriesPattern(instanceId), 0, MAX_COMMITS_READ);
    const byStream = new Map<string, ReturnType<typeof upcastDelivery>[]>();
    for (const commit of page.commits) {
      const list = byStream.get(commit.stream) ?? [];
      list.push(...commit.events.map(upcastDelivery));
      byStream.set(commit.stream, list);
    }
    return [...byStream.values()].map(foldDelivery).filter((d): d is Delivery => d.exists);
  }
}
