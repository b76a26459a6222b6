import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HISTORY_EVENT_TYPES, isAppError } from '@wagw/lib';
import { credentialRefusal, type Revocations } from '../auth/revocations';
import type { InstancesClientApi } from '../instancesClient';
import { AccessToken, TypesFilter, COMMON_ERRORS, envelope, errorResponses, InstanceId } from '../schemas';

const Filters = {
  types: TypesFilter('event types', HISTORY_EVENT_TYPES, 'MessageAccepted,MessageFailed'),
  since: Type.Optional(Type.String({ maxLength: 64, description: 'Events from this time on (ISO 8601)', examples: ['2026-11-23T10:00:00Z'] })),
  until: Type.Optional(Type.String({ maxLength: 64, description: 'Events up to this time (ISO 8601)' })),
  message_id: Type.Optional(
    Type.String({
      maxLength: 128,
      description:
        "One message's whole life: an m_… or in_… id (400 invalid_message_id for another form); a well-formed id of no message of the instance answers no events",
    }),
  ),
};
const Cursor = Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'next_cursor of the previous page; 0 = the start' }));
const HistoryQuery = Type.Object({
  instance_id: InstanceId,
  cursor: Cursor,
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Most events a page holds; a page also ends at about 1 MiB of events' }),
  ),
  ...Filters,
  access_token: AccessToken,
});
const ExportQuery = Type.Object({ instance_id: InstanceId, cursor: Cursor, ...Filters, access_token: AccessToken });

const HistoryEvent = Type.Object({
  sequence: Type.Integer({ description: 'Sequence of the commit that holds the event' }),
  stream: Type.String({ description: 'The stream: <instance_id>.instance or <instance_id>.message.<message_id>' }),
  type: Type.String({ examples: ['InstanceCreated'] }),
  schema_version: Type.Integer(),
  occurred_at: Type.String({ format: 'date-time' }),
  data: Type.Record(Type.String(), Type.Unknown()),
});

const cursorOf = (nextSequence: string): number | null => (Number(nextSequence) > 0 ? Number(nextSequence) : null);

/**
 * The chunks as a stream that takes the next one only when the reply asks for it (its socket took the last one):
 * `Readable.from` would hold one more, and by default 16, read ahead of a slow reader; every chunk read ahead is a
 * page the instances service read in clear, which an erasure or a revocation meanwhile no longer stops.
 */
const pulledOnDemand = (chunks: AsyncGenerator<Buffer | string>): Readable =>
  new Readable({
    highWaterMark: 0,
    read() {
      chunks.next().then(
        ({ value, done }) => void this.push(done ? null : value),
        (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
      );
    },
    // The reply closed early (the client went away): the generator's cleanup cancels the export's call.
    destroy(error, callback) {
      chunks.return(undefined).then(
        () => callback(error),
        () => callback(error),
      );
    },
  });

/** The audit trail: pages (`/history`) and the whole of it as NDJSON (`/history/export`). */
export const historyRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi; revocations: Revocations }> = async (
  app,
  { instances, revocations },
) => {
  const tags = ['Instances'];

  app.get(
    '/history',
    {
      schema: {
        tags,
        operationId: 'getHistory',
        summary: "An instance's audit trail",
        description:
          'Every event of the instance and of its messages, oldest first, optionally filtered. Pass next_cursor back as cursor (with the same filters) for the next page; null means the end. A page holds whole commits, at most limit events and about 1 MiB of events (one commit larger than either is returned whole): large messages end a page before limit, and with filters it may hold fewer, even none; go on with next_cursor until it is null.',
        querystring: HistoryQuery,
        response: {
          200: envelope({ instance_id: InstanceId, events: Type.Array(HistoryEvent), next_cursor: Type.Union([Type.Integer(), Type.Null()]) }),
          ...errorResponses(...COMMON_ERRORS, 404),
        },
      },
    },
    async (request, reply) => {
      const { instance_id: id, cursor = 0, limit = 100, types = '', since = '', until = '', message_id: messageId = '' } = request.query;
      const page = await instances.history({ account: request.account, instanceId: id, fromSequence: cursor, limit, types, since, until, messageId });
      // The events come as the JSON text of this very answer (see instances' historyJson.ts): sent as they are, not
      // parsed and serialized again (a JSON string with a JSON content type skips Fastify's serializer).
      const head = JSON.stringify({ status: 200, message: `${page.count} event(s)`, instance_id: id }).slice(0, -1);
      const text = `${head},"events":${page.eventsJson},"next_cursor":${JSON.stringify(cursorOf(page.nextSequence))}}`;
      // The typed reply takes the answer's object only; this one is already its JSON text.
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(text);
    },
  );

  app.get(
    '/history/export',
    {
      schema: {
        tags,
        operationId: 'exportHistory',
        summary: "An instance's whole audit trail as NDJSON",
        description:
          'Streams the history (same filters as /history) as application/x-ndjson: one event per line, oldest first, then a last line `{"next_cursor": ...}` (null: the end was reached). If the export breaks off (the service became unavailable, or the token was revoked or expired meanwhile: `token_revoked`, `token_expired`), the last line is `{"error", "code", "next_cursor"}`: resume with cursor=next_cursor (with a valid token). Constant memory: read and written a page at a time.',
        querystring: ExportQuery,
        // A stream is sent as it is (no serializer); the schema documents it in the OpenAPI document: NDJSON text, not
        // one JSON value, so a generated client reads it as text or a stream.
        response: {
          200: {
            description: 'One event (as /history gives it) per line, oldest first, then the cursor line',
            content: { 'application/x-ndjson': { schema: Type.String() } },
          },
          ...errorResponses(...COMMON_ERRORS, 404),
        },
      },
    },
    async (request, reply) => {
      const { instance_id: id, cursor = 0, types = '', since = '', until = '', message_id: messageId = '' } = request.query;
      // The call ends with the HTTP exchange: a client that goes away cancels it (and the service's scan).
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const chunks = instances.exportHistory(
        { account: request.account, instanceId: id, fromSequence: cursor, limit: 0, types, since, until, messageId },
        gone.signal,
      );
      // The first chunk is awaited before answering: a bad filter, cursor or instance is a plain 4xx, not a broken stream.
      const first = await chunks.next();
      const credential = request.credential;
      const lines = async function* (): AsyncGenerator<Buffer | string> {
        let next: number | null = cursor;
        try {
          for (let chunk = first; !chunk.done; chunk = await chunks.next()) {
            // The credential was checked when the export began; a long one (many MiB) must not outlive its revocation
            // or expiry. Checked per chunk (at most ~1 MiB each): the last line says why it ended, and where to resume.
            const refusal = credential && credentialRefusal(credential, revocations);
            if (refusal) throw refusal;
            if (chunk.value.ndjson.length > 0) yield chunk.value.ndjson;
            next = cursorOf(chunk.value.nextSequence);
          }
          yield `${JSON.stringify({ next_cursor: null })}\n`;
        } catch (error) {
          const { message, code } = isAppError(error) ? error : { message: 'The export broke off', code: 'internal' };
          request.log.warn({ err: error, instanceId: id, nextCursor: next }, 'history export broke off');
          yield `${JSON.stringify({ error: message, code, next_cursor: next })}\n`;
        } finally {
          await chunks.return(undefined);
        }
      };
      // The typed reply takes the documented 200 (a string); this one is the NDJSON stream.
      return (reply as FastifyReply).type('application/x-ndjson; charset=utf-8').send(pulledOnDemand(lines()));
    },
  );
};
