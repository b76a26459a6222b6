import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { conflict, PHONE_NUMBER_PATTERN } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import type { SessionsClientApi } from '../sessionsClient';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, InstanceId } from '../schemas';
import { conflictResponse } from '../responseDocs';

/** Linking with a pairing code instead of a QR code; ownership is checked with the instances service first. */
export const pairingRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi; sessions: SessionsClientApi }> = async (
  app,
  { instances, sessions },
) => {
  app.get(
    '/get_paircode',
    {
      schema: {
        tags: ['Instances'],
        operationId: 'getPairingCode',
        summary: 'The pairing code that links the instance to a phone number (instead of a QR code)',
        description:
          'Starts a connection when none runs, as get_qrcode does, and asks the platform for a pairing code for `number`. On that phone: Linked devices, Link with phone number, then type the code. Same states and errors as get_qrcode (409 when connected, 503 when the platform gives no code in time).',
        querystring: Type.Object({
          instance_id: InstanceId,
          number: Type.String({ pattern: PHONE_NUMBER_PATTERN, description: 'The phone to link: international digits without +' }),
          access_token: AccessToken,
        }),
        response: {
          200: envelope({ code: Type.String({ description: 'The 8-character code to type on the phone' }) }),
          ...errorResponses(...COMMON_ERRORS, 404),
          ...conflictResponse(['already_connected', 'already_linked', 'instance_failed'], 'The instance is connected; no pairing code is needed'),
        },
      },
    },
    async (request) => {
      const instance = await instances.get(request.account, request.query.instance_id);
      if (instance.state === 'connected') throw conflict('already_connected', 'The instance is connected; no pairing code is needed');
      const { code } = await sessions.getPairingCode({ instanceId: instance.instanceId, number: request.query.number, waitMs: 0 });
      return { status: 200, message: 'Type this code on the phone (Linked devices, Link with phone number)', code };
    },
  );
};
