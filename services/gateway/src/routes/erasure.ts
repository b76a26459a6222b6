import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { idempotencyKeyOf, newCommandId } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, EXAMPLE_ID, IdempotencyHeaders, InstanceId } from '../schemas';
import { getAndPost } from './getAndPost';

const EraseFields = Type.Object({ instance_id: InstanceId, access_token: AccessToken }, { examples: [{ instance_id: EXAMPLE_ID }] });

const EraseResponse = {
  200: envelope(
    { instance_id: InstanceId, data_erased_at: Type.String({ format: 'date-time', description: 'When the content was erased (the latest erasure)' }) },
    { message: 'Instance data erased', instance_id: EXAMPLE_ID, data_erased_at: '2026-11-24T01:00:00.000Z' },
  ),
  ...errorResponses(...COMMON_ERRORS, 404),
};

const description =
  "Destroys the instance's data key. Message content in the event log (texts, captions, media URLs, file names, push names) was sealed with it, so from now on history, export, webhook replays and live events show that content as null, with erased: true on the event's data; every event's type, time, ids and numbers stay, and the erasure itself is recorded (event InstanceDataErased, webhook instance.data_erased, data_erased_at in status). No event is rewritten. Sends accepted but not sent yet fail with reason content_erased. New sends afterwards work: a new key is made. Idempotent: a repeat answers the same, and erases nothing new unless content was stored since; a retry with the same Idempotency-Key destroys nothing received since its first call. Content already delivered to webhooks or read over SSE or export cannot be recalled (README, \"Erasure\").";

export const erasureRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi }> = async (app, { instances }) => {
  getAndPost(app, '/erase_instance_data', {
    tags: ['Instances'],
    description,
    headers: IdempotencyHeaders,
    fields: EraseFields,
    response: EraseResponse,
    post: { operationId: 'eraseInstanceData', summary: "Erase an instance's message content (crypto-shredding)" },
    get: { operationId: 'eraseInstanceDataQuery', summary: "Erase an instance's message content (query form)" },
    handler: async (fields, request) => {
      const instance = await instances.eraseData(request.account, fields.instance_id, idempotencyKeyOf(request.headers) ?? newCommandId());
      return { status: 200, message: 'Instance data erased', instance_id: instance.instanceId, data_erased_at: instance.dataErasedAt };
    },
  });
};
