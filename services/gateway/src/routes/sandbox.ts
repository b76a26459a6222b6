import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { invalidArgument, LIMITS, WHATSAPP_FILE_MAX_BYTES, PHONE_NUMBER_PATTERN, SANDBOX_MEDIA_KINDS } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import type { SessionsClientApi } from '../sessionsClient';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, InstanceId } from '../schemas';
import { conflictResponse } from '../responseDocs';

/** Routes that exist only with WA_CONNECTOR=sandbox: play the phone's part. */
export const sandboxRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi; sessions: SessionsClientApi }> = async (
  app,
  { instances, sessions },
) => {
  const tags = ['Sandbox'];
  // Each answers its own 409s: the sandbox connector missing (sandbox_only), and what the simulated phone meets.
  const ok = (conflicts: ReturnType<typeof conflictResponse>) => ({
    200: envelope({ success: Type.Boolean() }),
    ...errorResponses(...COMMON_ERRORS, 404),
    ...conflicts,
  });

  app.get(
    '/sandbox/scan',
    {
      schema: {
        tags,
        operationId: 'sandboxScan',
        summary: 'Sandbox: scan the current QR code with a simulated phone',
        querystring: Type.Object({ instance_id: InstanceId, number: Type.String({ pattern: PHONE_NUMBER_PATTERN }), access_token: AccessToken }),
        response: ok(conflictResponse(['no_qr_waiting', 'sandbox_only'])),
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
        summary: 'Sandbox: a simulated contact sends the instance a message (in a group with group_id)',
        description:
          'Text, media, or media with `text` as its caption. `media` names the kind of file; the sandbox makes a sample file of that kind (`media_size` bytes, default the smallest), which GET /v1/media then serves.',
        querystring: Type.Object({
          instance_id: InstanceId,
          from: Type.String({ pattern: PHONE_NUMBER_PATTERN }),
          text: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.text })),
          media: Type.Optional(Type.Union(SANDBOX_MEDIA_KINDS.map((kind) => Type.Literal(kind)))),
          media_size: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: WHATSAPP_FILE_MAX_BYTES,
              description: "Bytes of the sample file; a value below its kind's smallest file (its header, at most 66 bytes) gives that smallest file",
            }),
          ),
          push_name: Type.Optional(Type.String({ maxLength: 128 })),
          group_id: Type.Optional(Type.String({ maxLength: 64, description: 'A message in this group (one list_groups answers) from `from`' })),
          access_token: AccessToken,
        }),
        response: ok(conflictResponse(['not_connected', 'sandbox_only'], 'Instance 6F1C0A9B3D2E4F5A6B7C is not connected to the sandbox')),
      },
    },
    async (request) => {
      const { text, media, media_size: mediaSize } = request.query;
      const instance = await instances.get(request.account, request.query.instance_id);
      await sessions.sandboxInbound({
        instanceId: instance.instanceId,
        from: request.query.from,
        text: text ?? '',
        pushName: request.query.push_name ?? '',
        groupId: request.query.group_id ?? '',
        mediaKind: media ?? '',
        mediaSize: mediaSize ?? 0,
      });
      return { status: 200, message: 'Delivered to the instance', success: true };
    },
  );

  app.get(
    '/sandbox/restrict',
    {
      schema: {
        tags,
        operationId: 'sandboxRestrict',
        summary: "Sandbox: WhatsApp restricts the instance's account (or lifts it)",
        description:
          'Like WhatsApp answering sends with 463: the next send fails with `account_restricted`, the instance shows `restricted` in status, an `instance.restricted` webhook goes out, and later sends wait. `seconds`: when it ends (announced at once, as WhatsApp does); without it the end is unknown. `lift=true` ends it.',
        querystring: Type.Object({
          instance_id: InstanceId,
          seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 * 24 * 3600, description: 'When the restriction ends, from now' })),
          lift: Type.Optional(Type.Boolean({ description: 'Lift the restriction instead' })),
          access_token: AccessToken,
        }),
        response: ok(conflictResponse(['sandbox_only'])),
      },
    },
    async (request) => {
      const { seconds, lift = false } = request.query;
      if (lift && seconds !== undefined) throw invalidArgument('invalid_restriction', 'Give seconds or lift=true, not both');
      const instance = await instances.get(request.account, request.query.instance_id);
      await sessions.sandboxRestrict({ instanceId: instance.instanceId, seconds: seconds ?? 0, lift });
      return { status: 200, message: lift ? 'Restriction lifted' : 'Restricted', success: true };
    },
  );
};
