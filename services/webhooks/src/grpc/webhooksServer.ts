import { unaryHandler, type DeliveryRecordInput, type Logger, type WebhooksHandlers } from '@wagw/lib';
import type { DeliveriesService } from '../application/deliveriesService';
import type { Delivery } from '../delivery/state';

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

export const webhooksHandlers = (service: DeliveriesService, logger: Logger): WebhooksHandlers => ({
  ListDeliveries: unaryHandler(logger, 'ListDeliveries', async (r) => {
    const page = await service.list(r.account, r.instanceId, r.status, r.limit, r.cursor);
    return { deliveries: page.items.map(toRecord), nextCursor: page.nextCursor ?? '' };
  }),
  Redeliver: unaryHandler(logger, 'Redeliver', async (r) => ({
    deliveryIds: await service.redeliver(r.account, r.instanceId, r.deliveryId),
  })),
  Replay: unaryHandler(logger, 'Replay', async (r) => ({
    replayId: await service.replay(r.account, r.instanceId, { since: r.since, until: r.until, types: r.types }),
  })),
});
