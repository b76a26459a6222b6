import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox';
import { idempotencyKeyOf, LIMITS } from '@wagw/lib';
import type { SessionsClientApi } from '../sessionsClient';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, EXAMPLE_ID, IdempotencyHeaders, InstanceId } from '../schemas';

const SendFields = Type.Object(
  {
    number: Type.String({ maxLength: 32, description: 'Recipient: international digits, no + or separators (7-15 digits)', examples: ['4915112345678'] }),
    type: Type.Union([Type.Literal('text'), Type.Literal('media')]),
    message: Type.Optional(Type.String({ maxLength: LIMITS.text, description: 'Text; for media, the caption' })),
    media_url: Type.Optional(Type.String({ maxLength: LIMITS.url, description: 'http(s) URL of the media (type media)' })),
    filename: Type.Optional(Type.String({ maxLength: LIMITS.filename, description: 'Names a document (type media)' })),
    instance_id: InstanceId,
    access_token: AccessToken,
  },
  { examples: [{ instance_id: EXAMPLE_ID, number: '4915112345678', type: 'text', message: 'Your order has shipped' }] },
);

const SendResponse = {
  200: envelope({ message_id: Type.String() }, { message: 'Message accepted for sending', message_id: 'm_3a1f09c2b7d4e6f8a0b1c2d3' }),
  ...errorResponses(...COMMON_ERRORS, 404, 409),
};

export const messagesRoutes: FastifyPluginAsyncTypebox<{ sessions: SessionsClientApi }> = async (app, { sessions }) => {
  const tags = ['Messages'];
  const description =
    'Accepts the message for sending and answers its message_id at once; it is durable from then on. Delivery progress (sent, delivered, read, failed) arrives on the webhook and in the history. While the instance is disconnected, sends wait (up to 24 h). With an Idempotency-Key header, a repeat answers the same message_id and sends nothing new.';

  // One call: the sessions service checks ownership from its own read model (404 for another account's instance)
  // and the number (isPhoneNumber: 400 invalid_number, a more useful code than the schema's invalid_request).
  const send = async (account: string, fields: Static<typeof SendFields>, headers: Record<string, unknown>) => {
    const { messageId } = await sessions.send({
      account,
      instanceId: fields.instance_id,
      to: fields.number,
      type: fields.type,
      text: fields.message ?? '',
      mediaUrl: fields.media_url ?? '',
      filename: fields.filename ?? '',
      idempotencyKey: idempotencyKeyOf(headers) ?? '',
    });
    return { status: 200, message: 'Message accepted for sending', message_id: messageId };
  };

  app.post(
    '/send',
    {
      schema: {
        tags,
        operationId: 'sendMessage',
        summary: 'Send a text or media message',
        description,
        headers: IdempotencyHeaders,
        body: SendFields,
        response: SendResponse,
      },
    },
    async (request) => send(request.account, request.body, request.headers),
  );
  app.get(
    '/send',
    {
      schema: {
        tags,
        operationId: 'sendMessageQuery',
        summary: 'Send a text or media message (query form)',
        description,
        headers: IdempotencyHeaders,
        querystring: SendFields,
        response: SendResponse,
      },
    },
    async (request) => send(request.account, request.query, request.headers),
  );
};
