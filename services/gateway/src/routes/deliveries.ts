import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DELIVERY_STATUSES, oneOf, PAGE_LIMIT } from '@wagw/lib';
import type { WebhooksClientApi } from '../webhooksClient';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, InstanceId, NextCursor, PageLimit } from '../schemas';
import { conflictResponse } from '../responseDocs';

const DeliveryId = Type.String({
  pattern: '^(rpl_[0-9a-f]+_)?evt_[0-9]+_[0-9]+$',
  description: 'The id of the delivery (its webhook-id, or a replay id and the webhook-id)',
});

const Delivery = Type.Object({
  delivery_id: Type.String(),
  event_type: Type.String({ examples: ['message.received'] }),
  status: Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s))),
  reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  replay_of: Type.Union([Type.String(), Type.Null()], {
    description: "A replay's delivery (/v1/replay_webhooks): the original event's webhook-id, which it is sent with",
  }),
  attempts: Type.Array(
    Type.Object({
      attempt: Type.Integer(),
      at: Type.String({ format: 'date-time' }),
      url: Type.String(),
      outcome: Type.Union([Type.Literal('delivered'), Type.Literal('retry'), Type.Literal('gone')]),
      status_code: Type.Union([Type.Integer(), Type.Null()]),
      error: Type.Union([Type.String(), Type.Null()]),
      duration_ms: Type.Integer(),
      worker: Type.String({ description: 'The webhooks replica that made the attempt' }),
    }),
  ),
});

export const deliveriesRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksClientApi }> = async (app, { webhooks }) => {
  const tags = ['Webhook'];

  app.get(
    '/webhook_deliveries',
    {
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: "The instance's webhook deliveries, newest first, with every attempt, a page at a time",
        description:
          'status: pending (waiting or retrying), delivered, dead (dead-lettered: retries exhausted or 410 Gone), dropped (webhook was off). A page ends at `limit` deliveries or about 1 MiB of them (one larger goes alone), whichever comes first: follow next_cursor until it is null.',
        querystring: Type.Object({
          instance_id: InstanceId,
          status: Type.Optional(Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)))),
          cursor: Type.Optional(DeliveryId),
          limit: PageLimit,
          access_token: AccessToken,
        }),
        response: { 200: envelope({ deliveries: Type.Array(Delivery), next_cursor: NextCursor }), ...errorResponses(...COMMON_ERRORS, 404) },
      },
    },
    async (request) => {
      const { instance_id: instanceId, status = '', limit = PAGE_LIMIT.default, cursor = '' } = request.query;
      const { deliveries, nextCursor } = await webhooks.list({ account: request.account, instanceId, status, limit, cursor });
      return {
        status: 200,
        message: `${deliveries.length} deliver${deliveries.length === 1 ? 'y' : 'ies'}`,
        next_cursor: nextCursor || null,
        deliveries: deliveries.map((d) => ({
          delivery_id: d.deliveryId,
          event_type: d.eventType,
          status: oneOf(DELIVERY_STATUSES, d.status, 'delivery status'),
          reason: d.reason || null,
          created_at: d.createdAt,
          replay_of: d.replayOf || null,
          attempts: d.attempts.map((a) => ({
            attempt: a.attempt,
            at: a.at,
            url: a.url,
            outcome: a.outcome as 'delivered',
            status_code: a.statusCode || null,
            error: a.error || null,
            duration_ms: a.durationMs,
            worker: a.worker,
          })),
        })),
      };
    },
  );

  app.get(
    '/redeliver_webhooks',
    {
      schema: {
        tags,
        operationId: 'redeliverWebhooks',
        summary: 'Redeliver one failed (dead-lettered) delivery, or all of them',
        description:
          'With delivery_id: that delivery (409 unless it is dead). Without: every dead delivery of the instance. Each starts the retry schedule again.',
        querystring: Type.Object({ instance_id: InstanceId, delivery_id: Type.Optional(DeliveryId), access_token: AccessToken }),
        response: {
          200: envelope({ success: Type.Boolean(), delivery_ids: Type.Array(Type.String()) }),
          ...errorResponses(...COMMON_ERRORS, 404),
          ...conflictResponse(
            ['delivery_not_failed', 'delivery_changed', 'webhook_disabled'],
            'Delivery evt_12_0 is delivered; only failed deliveries can be redelivered',
          ),
        },
      },
    },
    async (request) => {
      const { instance_id: instanceId, delivery_id: deliveryId = '' } = request.query;
      const { deliveryIds } = await webhooks.redeliver({ account: request.account, instanceId, deliveryId });
      return { status: 200, message: `${deliveryIds.length} redelivery(ies) scheduled`, success: true, delivery_ids: deliveryIds };
    },
  );
};
