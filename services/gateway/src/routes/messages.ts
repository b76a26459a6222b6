import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SessionsClientApi } from '../sessionsClient';
import { EXAMPLE_ID, IdempotencyHeaders } from '../schemas';
import { getAndPost } from './getAndPost';
import { SEND_DESCRIPTION, sendContentFields, SendResponse, sendInputFirst, sendTo } from './sendContent';

const SendFields = Type.Object(
  {
    number: Type.String({ maxLength: 32, description: 'Recipient: international digits, no + or separators (7-15 digits)', examples: ['4915112345678'] }),
    ...sendContentFields,
  },
  {
    examples: [
      { instance_id: EXAMPLE_ID, number: '4915112345678', type: 'text', message: 'Your order has shipped' },
      { instance_id: EXAMPLE_ID, number: '4915112345678', type: 'location', latitude: 52.5163, longitude: 13.3777, name: 'Brandenburg Gate' },
      { instance_id: EXAMPLE_ID, number: '4915112345678', type: 'reaction', message_id: 'in_4b1d0c3e2f5a6b7c8d9e0f1a', emoji: '👍' },
    ],
  },
);

export const messagesRoutes: FastifyPluginAsyncTypebox<{ sessions: SessionsClientApi }> = async (app, { sessions }) => {
  // The sessions service checks ownership from its own read model (404 for another account's instance) and every
  // field with a code of its own (invalid_number, invalid_latitude, ...), more useful than the schema's invalid_request.
  getAndPost(app, '/send', {
    tags: ['Messages'],
    description: SEND_DESCRIPTION,
    headers: IdempotencyHeaders,
    fields: SendFields,
    response: SendResponse,
    post: { operationId: 'sendMessage', summary: 'Send a message: text, media, location, contact card or reaction, optionally as a reply' },
    get: { operationId: 'sendMessageQuery', summary: 'Send a message (query form)' },
    preValidation: sendInputFirst('number'),
    handler: (fields, request) => sendTo(sessions, request.account, { to: fields.number }, fields, request.headers),
  });
};
