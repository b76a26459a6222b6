import { randomBytes } from 'node:crypto';
import { conflict, DELIVERY_STATUSES, invalidArgument, isVersionConflict, newCommandId, notFound, pageAfter, type EventStore, type Page } from '@wagw/lib';
import { decideRedelivery } from '../delivery/decisions';
import { deliveryStream, instanceDeliveriesPattern } from '../delivery/events';
import { foldDelivery, upcastDelivery, type Delivery, type DeliveryStatus } from '../delivery/state';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';
import { decideReplay } from '../replay/decisions';
import { replayStream } from '../replay/events';

/** How many delivery commits one listing reads at most (newest deliveries beyond it are not shown). */
const MAX_COMMITS_READ = 20_000;

const newestFirst = (a: Delivery, b: Delivery): number => b.createdAt.localeCompare(a.createdAt) || b.deliveryId.localeCompare(a.deliveryId);

/** The read, redeliver and replay side of webhooks: an instance's deliveries with every attempt, redelivery of failed ones, replays. */
export class DeliveriesService {
  constructor(
    private readonly deliveries: EventStore,
    private readonly endpoints: EndpointDirectory,
  ) {}

  /** Newest first, a page at a time (`cursor`: the last delivery id of the previous page); `status` filters. */
  async list(account: string, instanceId: string, status: string, limit: number, cursor = ''): Promise<Page<Delivery>> {
    await this.assertOwner(account, instanceId);
    if (status && !DELIVERY_STATUSES.some((s) => s === status)) throw invalidArgument('invalid_status', `status must be ${DELIVERY_STATUSES.join(', ')}`);
    const all = (await this.readAll(instanceId)).map((read) => read.delivery);
    return pageAfter({
      items: all.filter((d) => !status || d.status === (status as DeliveryStatus)).sort(newestFirst),
      compare: newestFirst,
      cursorOf: (d) => d.deliveryId,
      find: (id) => all.find((d) => d.deliveryId === id),
      cursor,
      limit,
    });
  }

  /** Redelivers one dead-lettered delivery, or all of them when `deliveryId` is empty; answers the ids. */
  async redeliver(account: string, instanceId: string, deliveryId: string): Promise<string[]> {
    await this.assertOwner(account, instanceId);
    const now = new Date().toISOString();
    const all = await this.readAll(instanceId);
    const targets = deliveryId ? all.filter((r) => r.delivery.deliveryId === deliveryId) : all.filter((r) => r.delivery.status === 'dead');
    if (deliveryId && targets.length === 0) throw notFound('delivery_not_found', 'Delivery not found');
    const redelivered: string[] = [];
    for (const { delivery, version } of targets) {
      const stream = deliveryStream(instanceId, delivery.deliveryId);
      try {
        // Only dead deliveries can be redelivered (a 409 otherwise), and those are all on job streams (delivery.<id>).
        // Expected version = the one the decision was made on: two concurrent redeliveries store one round, not two.
        await this.deliveries.append(stream, decideRedelivery(delivery, now), { expectedVersion: version, commandId: newCommandId() });
        redelivered.push(delivery.deliveryId);
      } catch (error) {
        // Changed meanwhile (a concurrent redelivery, or an attempt recorded): it is no longer the dead delivery read.
        if (!isVersionConflict(error)) throw error;
        if (deliveryId) throw conflict('delivery_changed', 'The delivery changed meanwhile (redelivered or retried); list it again');
      }
    }
    return deliveryId ? [deliveryId] : redelivered;
  }

  /**
   * Asks for a replay of the instance's past events (from `since`, up to `until`, of `types`) to its current webhook;
   * the replayer works it (see worker/replayer). Answers the replay's id.
   */
  async replay(account: string, instanceId: string, window: { since: string; until: string; types: string }): Promise<string> {
    await this.assertOwner(account, instanceId);
    const replayId = `rpl_${randomBytes(6).toString('hex')}`;
    const now = new Date().toISOString();
    const events = decideReplay({ replayId, instanceId, ...window, now }, this.endpoints.get(instanceId)?.enabled === true);
    await this.deliveries.append(replayStream(instanceId, replayId), events, { expectedVersion: 0, commandId: replayId });
    return replayId;
  }

  private assertOwner(account: string, instanceId: string): Promise<void> {
    return this.endpoints.assertOwner(account, instanceId);
  }

  /** Every delivery of the instance, each with its stream's version (the sequence of its last commit). */
  private async readAll(instanceId: string): Promise<Array<{ delivery: Delivery; version: number }>> {
    const page = await this.deliveries.readPattern(instanceDeliveriesPattern(instanceId), 0, MAX_COMMITS_READ);
    const byStream = new Map<string, { events: ReturnType<typeof upcastDelivery>[]; version: number }>();
    for (const commit of page.commits) {
      const entry = byStream.get(commit.stream) ?? { events: [], version: 0 };
      entry.events.push(...commit.events.map(upcastDelivery));
      entry.version = commit.sequence;
      byStream.set(commit.stream, entry);
    }
    return [...byStream.values()].flatMap(({ events, version }) => {
      const delivery = foldDelivery(events);
      return delivery.exists ? [{ delivery, version }] : [];
    });
  }
}
