import { Readable } from 'node:stream';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { INBOUND_MESSAGE_ID_PATTERN, unavailable } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import type { SessionsClientApi } from '../sessionsClient';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, EXAMPLE_ID, InstanceId } from '../schemas';
import { contentDisposition, contentType } from './fileHeaders';
import { getAndPost } from './getAndPost';
import { conflictResponse, CONTENT_DISPOSITION_HEADER, MEDIA_TOO_LARGE_RESPONSE } from '../responseDocs';

const EXAMPLE_MESSAGE_ID = 'in_5b0e3c9a1f2d4e6f8a7b9c0d';

const MessageQuery = Type.Object(
  {
    instance_id: InstanceId,
    message_id: Type.String({
      pattern: INBOUND_MESSAGE_ID_PATTERN,
      description: "A received message's id, as message.received gives it",
      examples: [EXAMPLE_MESSAGE_ID],
    }),
    access_token: AccessToken,
  },
  { examples: [{ instance_id: EXAMPLE_ID, message_id: EXAMPLE_MESSAGE_ID }] },
);

/** Received messages: read receipts (mark_read) and their media (media). */
export const inboundRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi; sessions: SessionsClientApi }> = async (
  app,
  { instances, sessions },
) => {
  const tags = ['Messages'];
  // Listed GET first in the OpenAPI document, as it always was.
  getAndPost(app, '/mark_read', {
    tags,
    description:
      "Sends WhatsApp's read receipt for a received message: its sender sees it read (blue ticks, unless your account hides read receipts). Needs a connected instance (409 otherwise). A message received over 30 days ago, one the instance did not receive, or one it sent answers 404. To mark every inbound message read as it arrives, run the sessions service with AUTO_MARK_READ=true.",
    fields: MessageQuery,
    response: {
      200: envelope({ success: Type.Boolean() }, { message: 'Marked read', success: true }),
      ...errorResponses(...COMMON_ERRORS, 404),
      ...conflictResponse(['not_connected'], 'The instance is not connected: read receipts go out over its connection'),
    },
    get: { operationId: 'markReadQuery', summary: 'Mark a received message read' },
    post: { operationId: 'markRead', summary: 'Mark a received message read' },
    first: 'get',
    handler: async (fields, request) => {
      const instance = await instances.get(request.account, fields.instance_id);
      await sessions.markRead({ instanceId: instance.instanceId, messageId: fields.message_id });
      return { status: 200, message: 'Marked read', success: true };
    },
  });

  app.get(
    '/media',
    {
      schema: {
        tags,
        operationId: 'getMedia',
        summary: "A received message's media, decrypted",
        description:
          'The file of a received image, video, audio, document or sticker (message.received says `media` and its `url`), fetched from WhatsApp and decrypted: the body is the file, `Content-Type` its type as the sender gave it (application/octet-stream when that is not a media type a header can carry), `Content-Disposition` its file name when the sender gave one (at most 200 characters, its extension kept). Files over the download cap (MEDIA_DOWNLOAD_MAX_BYTES, 16 MiB by default) answer 413 `media_too_large`; a text message 404 `no_media`; a file WhatsApp no longer keeps (they expire after some weeks) 404 `media_expired`; while MEDIA_DOWNLOADS_MAX files are being downloaded from the sessions replica, 429 `media_downloads_busy` (retry).',
        querystring: MessageQuery,
        // The file is sent as it is (no serializer); the schema documents it in the OpenAPI document: any media type
        // (the sender's), bytes, so a generated client reads it as a blob or stream, not as JSON.
        response: {
          200: {
            description: "The file, with its Content-Type (the sender's, or application/octet-stream) and Content-Disposition",
            headers: CONTENT_DISPOSITION_HEADER,
            content: { '*/*': { schema: Type.String({ format: 'binary' }) } },
          },
          ...errorResponses(...COMMON_ERRORS, 404),
          ...MEDIA_TOO_LARGE_RESPONSE,
        },
      },
    },
    async (request, reply) => {
      // The call ends with the HTTP exchange: a client that goes away cancels it.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const instance = await instances.get(request.account, request.query.instance_id);
      const chunks = sessions.streamMedia({ instanceId: instance.instanceId, messageId: request.query.message_id }, gone.signal);
      // The head and the first bytes are awaited before answering: until then any failure (no file 404, too large 413,
      // unavailable 503) is a plain error answer. Later, the response is cut off short of its Content-Length, so the
      // client sees a failed download, never a truncated file.
      const head = await chunks.next();
      if (head.done) throw unavailable('media_download_failed', 'The media stream ended before the file; try again');
      const { size } = head.value;
      const first = await chunks.next();
      if (first.done !== (size === 0)) throw unavailable('media_download_failed', 'The media stream does not match the file; try again');
      const bytes = async function* (): AsyncGenerator<Buffer> {
        let sent = 0;
        try {
          for (let chunk = first; !chunk.done; chunk = await chunks.next()) {
            sent += chunk.value.data.length;
            yield chunk.value.data;
          }
          if (sent !== size) throw new Error(`the media stream carried ${sent} of ${size} bytes`);
        } finally {
          await chunks.return(undefined);
        }
      };
      // The typed reply takes the JSON answer's object only; this one is the file.
      return (reply as FastifyReply)
        .type(contentType(head.value.mimetype))
        .header('content-length', size)
        .header('content-disposition', contentDisposition(head.value.filename || null))
        .header('x-content-type-options', 'nosniff')
        .send(Readable.from(bytes()));
    },
  );
};
