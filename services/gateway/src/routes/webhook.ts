import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { assertWebhookUrl, newCommandId, parseWebhookEventFilter, WEBHOOK_EVENT_TYPE_NAMES } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, InstanceId, WebhookUrl } from '../schemas';

export const webhookRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi }> = async (app, { instances }) => {
  app.get(
    '/set_webhook',
    {
      schema: {
        tags: ['Webhook'],
        operationId: 'setWebhook',
        summary: "Set the instance's webhook URL and switch it on or off",
        description:
          'The first call gives the instance a Standard Webhooks signing secret (whsec_...), returned as signing_secret on every call; verify deliveries with it.',
        querystring: Type.Object({
          webhook_url: WebhookUrl,
          enable: Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true or false' }),
          events: Type.Optional(
            Type.String({
              maxLength: 512,
              description: `Comma-separated webhook event types to deliver: ${WEBHOOK_EVENT_TYPE_NAMES.join(', ')}. Absent or empty: every type. An unknown type, or only commas and blanks (\`,\`), answers 400 invalid_events`,
              examples: ['message.received,message.failed'],
            }),
          ),
          instance_id: InstanceId,
          access_token: AccessToken,
        }),
        response: {
          200: envelope(
            { success: Type.Boolean(), signing_secret: Type.String({ description: 'whsec_ + base64' }) },
            { message: 'Webhook enabled', success: true, signing_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9z3JJsp8VRw=' },
          ),
          ...errorResponses(...COMMON_ERRORS, 404),
        },
      },
    },
    async (request) => {
      const { webhook_url: url, enable, instance_id: instanceId, events = '' } = request.query;
      assertWebhookUrl(url);
      const result = await instances.setWebhook({
        account: request.account,
        instanceId,
        url,
        enabled: enable === 'true',
        commandId: newCommandId(),
        events: parseWebhookEventFilter(events),
      });
      return {
        status: 200,
        message: enable === 'true' ? 'Webhook enabled' : 'Webhook disabled',
        success: true,
        signing_secret: result.signingSecret,
      };
    },
  );
};
