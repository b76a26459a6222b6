import { createHash, randomBytes } from 'node:crypto';
import {
  conflict,
  DELIVERY_STATUSES,
  invalidArgument,
  isVersionConflict,
  MAX_PAGE_BYTES,
  newCommandId,
  notFound,
  pageSize,
  type EventStore,
  type Page,
} from '@wagw/lib';
import { assertWebhookOn, decideRedelivery } from '../delivery/decisions';
import { deliveredStream, deliveryStream } from '../delivery/events';
import { foldDelivery, upcastDelivery, type Delivery, type DeliveryStatus } from '../delivery/state';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';
import { decideReplay } from '../replay/decisions';
import { replayStream } from '../replay/events';
import { evolveReplay, initialReplayState, upcastReplay } from '../replay/state';
import { scanNewestDeliveries, type ScannedDelivery } from './deliveryScan';

/** Dead deliveries one `redeliver_webhooks` call (without a delivery id) takes at most; a second call takes the rest. */
const MAX_REDELIVERED = 10_000;
/** Delivery ids as issued (`dlv_…`, `<replay_id>_<webhook-id>`): a cursor or id of another form names nothing here. */
const DELIVERY_ID = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * A delivery's size as a page carries it (ListDeliveries' record), at least: its texts in UTF-8, and room for each
 * field's tag and length and the numbers and times. An attempt's URL may be 2 KiB, and a delivery has 10 attempts a
 * round: 1,000 of them made 20 MB.
 */
export const deliveryBytes = (d: Delivery): number =>
  128 +
  Buffer.byteLength(d.deliveryId) +
  Buffer.byteLength(d.eventType) +
  Buffer.byteLength(d.reason ?? '') +
  Buffer.byteLength(d.replayOf ?? '') +
  d.attempts.reduce((n, a) => n + 64 + Buffer.byteLength(a.url) + Buffer.byteLength(a.error ?? '') + Buffer.byteLength(a.worker), 0);

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
    const before = cursor ? ((await this.find(instanceId, cursor))?.createdAt ?? null) : Number.POSITIVE_INFINITY;
    if (before === null) throw invalidArgument('invalid_cursor', 'cursor does not name a delivery of this instance: pass a next_cursor of an earlier page');
    const size = pageSize(limit);
    const items = await scanNewestDeliveries(this.deliveries, instanceId, {
      before,
      count: size + 1,
      want: (d) => !status || d.status === (status as DeliveryStatus),
    });
    // At most `size` deliveries and about MAX_PAGE_BYTES of them (a larger one goes alone): the page travels as one
    // gRPC message, and one past its limit failed the request (500 response_too_large). The rest comes with next_cursor.
    const page: Delivery[] = [];
    let bytes = 0;
    for (const { delivery } of items.slice(0, size)) {
      const more = deliveryBytes(delivery);
      if (page.length > 0 && bytes + more > MAX_PAGE_BYTES) break;
      page.push(delivery);
      bytes += more;
    }
    return { items: page, nextCursor: items.length > page.length ? page[page.length - 1]!.deliveryId : null };
  }

  /** Redelivers one dead-lettered delivery, or all of them when `deliveryId` is empty; answers the ids. */
  async redeliver(account: string, instanceId: string, deliveryId: string): Promise<string[]> {
    await this.assertOwner(account, instanceId);
    const now = new Date().toISOString();
    // Once for the whole call, before any scan (assertOwner caught the directory up with the instance's stream).
    assertWebhookOn(this.endpoints.get(instanceId)?.enabled === true, 'redelivering to it');
    const one = deliveryId ? await this.find(instanceId, deliveryId) : null;
    if (deliveryId && !one) throw notFound('delivery_not_found', 'Delivery not found');
    const targets = one
      ? [one]
      : (
          await scanNewestDeliveries(this.deliveries, instanceId, {
            before: Number.POSITIVE_INFINITY,
            count: MAX_REDELIVERED,
            want: (d) => d.status === 'dead',
          })
        ).reverse();
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
   * the replayer works it (see worker/replayer). Answers the replay's id. With an Idempotency-Key (`key`) the id is
   * made from it, so a retry (say, after a 503 whose request was taken after all) finds the replay recorded and
   * answers it, starting nothing new.
   */
  async replay(account: string, instanceId: string, window: { since: string; until: string; types: string }, key = ''): Promise<string> {
    await this.assertOwner(account, instanceId);
    const replayId = key
      ? `rpl_${createHash('sha256').update(`${instanceId}\u0000${key}`).digest('hex').slice(0, 12)}`
      : `rpl_${randomBytes(6).toString('hex')}`;
    const stream = replayStream(instanceId, replayId);
    const recorded = key
      ? (await this.deliveries.readStream(stream)).flatMap((c) => c.events.map(upcastReplay)).reduce(evolveReplay, initialReplayState())
      : undefined;
    const now = new Date().toISOString();
    const events = decideReplay({ replayId, instanceId, ...window, now }, this.endpoints.get(instanceId)?.enabled === true, recorded);
    if (events.length === 0) return replayId;
    try {
      await this.deliveries.append(stream, events, { expectedVersion: 0, commandId: replayId });
    } catch (error) {
      // The same key's request recorded it meanwhile: decided again against it (the same replay, or another window).
      if (!key || !isVersionConflict(error)) throw error;
      return this.replay(account, instanceId, window, key);
    }
    return replayId;
  }

  private assertOwner(account: string, instanceId: string): Promise<void> {
    return this.endpoints.assertOwner(account, instanceId);
  }

  /** One delivery of the instance by id (on either kind of stream), or null. */
  private async find(instanceId: string, deliveryId: string): Promise<ScannedDelivery | null> {
    if (!DELIVERY_ID.test(deliveryId)) return null;
    // Both at once: most deliveries succeed at their first attempt and live on the delivered stream.
    const streams = [deliveryStream(instanceId, deliveryId), deliveredStream(instanceId, deliveryId)];
    for (const commits of await Promise.all(streams.map((stream) => this.deliveries.readStream(stream)))) {
      if (commits.length === 0) continue;
      const delivery = foldDelivery(commits.flatMap((c) => c.events.map(upcastDelivery)));
      if (delivery.exists) return { delivery, version: commits[commits.length - 1]!.sequence, createdAt: commits[0]!.sequence };
    }
    return null;
  }
}
