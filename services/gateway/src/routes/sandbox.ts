import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { LIMITS, PHONE_NUMBER_PATTERN } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import type { SessionsClientApi } from '../sessionsClient';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, InstanceId } from '../schemas';

/** Routes that exist only with WA_CONNECTOR=sandbox: play the phone's part. */
export const sandboxRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi; sessions: SessionsClientApi }> = async (
  app,
  { instances, sessions },
) => {
  const tags = ['Sandbox'];
  const Ok = { 200: envelope({ success: Type.Boolean() }), ...errorResponses(...COMMON_ERRORS, 404, 409) };

  app.get(
    '/sandbox/scan',
    {
      schema: {
        tags,
        operationId: 'sandboxScan',
        summary: 'Sandbox: scan the current QR code with a simulated phone',
        querystring: Type.Object({ instance_id: InstanceId, number: Type.String({ pattern: PHONE_NUMBER_PATTERN }), access_token: AccessToken }),
        response: Ok,
      },
    },
    async (request) => {
      const instance = await instances.get(request.account, request.query.instance_id);
      await sessions.sandboxScan({ instanceId: instance.instanceId, number: request.query.number });
      return { status: 200, message: 'Scanned', success: true };
    },
  );

  app.get(
    '/sandbox/inbound',
    {
      schema: {
        tags,
        operationId: 'sandboxInbound',
        summary: 'Sandbox: a simulated contact sends the instance a text message (in a group with group_id)',
        querystring: Type.Object({
          instance_id: InstanceId,
          from: Type.String({ pattern: PHONE_NUMBER_PATTERN }),
          text: Type.String({ minLength: 1, maxLength: LIMITS.text }),
          push_name: Type.Optional(Type.String({ maxLength: 128 })),
          group_id: Type.Optional(Type.String({ maxLength: 64, description: 'A message in this group (one list_groups answers) from `from`' })),
          access_token: AccessToken,
        }),
        response: Ok,
      },
    },
    async (request) => {
      const instance = await instances.get(request.account, request.query.instance_id);
      await sessions.sandboxInbound({
        instanceId: instance.instanceId,
        from: request.query.from,
        text: request.query.text,
        pushName: request.query.push_name ?? '',
        groupId: request.query.group_id ?? '',
      });
      return { status: 200, message: 'Delivered to the instance', success: true };
    },
  );
};
