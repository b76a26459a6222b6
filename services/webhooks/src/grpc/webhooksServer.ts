import {
  serverStreamHandler,
  unaryHandler,
  type DeliveryRecordInput,
  type Logger,
  type StreamEventsFrame,
  type HandlersWithoutCall,
  type WebhooksHandlers,
} from '@wagw/lib';
import type { DeliveriesService } from '../application/deliveriesService';
import type { Delivery } from '../delivery/state';
import type { LiveEvents } from '../live/liveEvents';

const toRecord = (d: Delivery): DeliveryRecordInput => ({
  deliveryId: d.deliveryId,
  eventType: d.eventType,
  status: d.status,
  reason: d.reason ?? '',
  createdAt: d.createdAt,
  replayOf: d.replayOf ?? '',
  attempts: d.attempts.map((a) => ({
    attempt: a.attempt,
    at: a.at,
    url: a.url,
    outcome: a.outcome,
    statusCode: a.status ?? 0,
    error: a.error ?? '',
    durationMs: a.durationMs,
    worker: a.worker,
  })),
});

/** `Call` is served from the unary handlers by startGrpcServer. */
export const webhooksHandlers = (service: DeliveriesService, live: LiveEvents, logger: Logger): HandlersWithoutCall<WebhooksHandlers> => ({
  ListDeliveries: unaryHandler(logger, 'ListDeliveries', async (r) => {
    const page = await service.list(r.account, r.instanceId, r.status, r.limit, r.cursor);
    return { deliveries: page.items.map(toRecord), nextCursor: page.nextCursor ?? '' };
  }),
  Redeliver: unaryHandler(logger, 'Redeliver', async (r) => ({
    deliveryIds: await service.redeliver(r.account, r.instanceId, r.deliveryId),
  })),
  Replay: unaryHandler(logger, 'Replay', async (r) => ({
    replayId: await service.replay(r.account, r.instanceId, { since: r.since, until: r.until, types: r.types }, r.idempotencyKey),
  })),
  StreamEvents: serverStreamHandler(logger, 'StreamEvents', async (r) => {
    const feed = await live.open({ account: r.account, instanceId: r.instanceId, types: r.types, lastEventId: r.lastEventId });
    const frames = async function* (): AsyncGenerator<StreamEventsFrame> {
      yield { ready: true };
      // The body exactly as the webhook sends it (router.ts), so a receiver and a live reader get the same bytes.
      for await (const event of feed) yield { event: { id: event.id, type: event.type, json: JSON.stringify(event) } };
    };
    return { frames: frames(), close: () => feed.close() };
  }),
});
