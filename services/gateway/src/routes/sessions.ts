import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import QRCode from 'qrcode';
import { conflict } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import type { SessionsClientApi } from '../sessionsClient';
import { COMMON_ERRORS, envelope, errorResponses, InstanceQuery } from '../schemas';
import { conflictResponse } from '../responseDocs';

/** QR codes, reconnecting; ownership is checked with the instances service first (404 for another account's). */
export const sessionsRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi; sessions: SessionsClientApi }> = async (
  app,
  { instances, sessions },
) => {
  const tags = ['Instances'];

  app.get(
    '/get_qrcode',
    {
      schema: {
        tags,
        operationId: 'getQrCode',
        summary: 'The QR code that links the instance',
        description:
          'Starts a connection when none runs and waits (bounded) for the platform to issue a QR code; scan it with the phone (Linked devices). Answers 409 when the instance is already connected.',
        querystring: InstanceQuery,
        response: {
          200: envelope(
            { qrcode: Type.String({ description: 'data:image/png;base64,... PNG of the QR code' }) },
            { message: 'Scan this QR code with the phone', qrcode: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA...' },
          ),
          ...errorResponses(...COMMON_ERRORS, 404),
          ...conflictResponse(['already_connected', 'already_linked', 'instance_failed']),
        },
      },
    },
    async (request) => {
      const instance = await instances.get(request.account, request.query.instance_id);
      if (instance.state === 'connected') throw conflict('already_connected', 'The instance is connected; no QR code is needed');
      const { qr } = await sessions.getQr({ instanceId: instance.instanceId, waitMs: 0 });
      return {
        status: 200,
        message: 'Scan this QR code with the phone',
        qrcode: await QRCode.toDataURL(qr, { errorCorrectionLevel: 'L', margin: 2, width: 264 }),
      };
    },
  );

  app.get(
    '/reconnect',
    {
      schema: {
        tags,
        operationId: 'reconnect',
        summary: "Restart the instance's platform connection",
        querystring: InstanceQuery,
        response: { 200: envelope({ success: Type.Boolean() }), ...errorResponses(...COMMON_ERRORS, 404), ...conflictResponse(['not_linked']) },
      },
    },
    async (request) => {
      const instance = await instances.get(request.account, request.query.instance_id);
      await sessions.reconnect({ instanceId: instance.instanceId });
      return { status: 200, message: 'Reconnecting', success: true };
    },
  );
};
