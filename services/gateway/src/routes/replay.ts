import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { idempotencyKeyOf, WEBHOOK_EVENT_TYPE_NAMES } from '@wagw/lib';
import type { WebhooksClientApi } from '../webhooksClient';
import { AccessToken, TypesFilter, COMMON_ERRORS, envelope, errorResponses, IdempotencyHeaders, InstanceId } from '../schemas';
import { conflictResponse } from '../responseDocs';

/** GET /v1/replay_webhooks: past events delivered again to the current webhook. */
export const replayRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksClientApi }> = async (app, { webhooks }) => {
  app.get(
    '/replay_webhooks',
    {
      schema: {
        tags: ['Webhook'],
        operationId: 'replayWebhooks',
        summary: "Deliver the instance's past events again to its current webhook",
        description:
          'Every webhook event of the instance from since (up to until, of the given types) is delivered again to the webhook as it is now, each with its original webhook-id (receivers that dedupe skip what they have) and a new signature, at a bounded rate beside live deliveries, through the usual retries and dead letters. Each replayed delivery is listed in /v1/webhook_deliveries with replay_of = the original webhook-id. Answers at once with the replay id; the replay runs in the background and survives a restart. With an Idempotency-Key header, a retry (say, after a 503 service_timeout) answers the same replay_id and starts nothing new; the key used again for another window answers 409 idempotency_key_reused. 409 webhook_disabled when the webhook is off.',
        headers: IdempotencyHeaders,
        querystring: Type.Object({
          instance_id: InstanceId,
          since: Type.String({ maxLength: 64, description: 'Events from this time on (ISO 8601)', examples: ['2026-11-23T10:00:00Z'] }),
          until: Type.Optional(Type.String({ maxLength: 64, description: 'Events up to this time (ISO 8601)' })),
          types: TypesFilter('webhook event types', WEBHOOK_EVENT_TYPE_NAMES, 'message.received,message.sent'),
          access_token: AccessToken,
        }),
        response: {
          200: envelope({ replay_id: Type.String({ examples: ['rpl_3f2a9c01b7de'] }) }),
          ...errorResponses(...COMMON_ERRORS, 404),
          ...conflictResponse(['webhook_disabled', 'idempotency_key_reused']),
        },
      },
    },
    async (request) => {
      const { instance_id: instanceId, since, until = '', types = '' } = request.query;
      const idempotencyKey = idempotencyKeyOf(request.headers) ?? '';
      const { replayId } = await webhooks.replay({ account: request.account, instanceId, since, until, types, idempotencyKey });
      return { status: 200, message: 'Replay scheduled', replay_id: replayId };
    },
  );
};
