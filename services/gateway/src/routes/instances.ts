import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { idempotencyKeyOf, newCommandId } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, InstanceId, InstanceQuery, InstanceView } from '../schemas';
import { instanceView } from './views';

/** The command id of a request: its Idempotency-Key when given (so a retry repeats nothing), else a new one. */
const commandIdOf = (headers: Record<string, unknown>): string => idempotencyKeyOf(headers) ?? newCommandId();

export const instancesRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi }> = async (app, { instances }) => {
  const tags = ['Instances'];

  app.get(
    '/create_instance',
    {
      schema: {
        tags,
        summary: 'Create an instance',
        description: 'Creates a new instance for the calling account. With an Idempotency-Key header, a repeat answers the same instance.',
        querystring: Type.Object({ access_token: AccessToken }),
        response: { 200: envelope({ instance_id: InstanceId }), ...errorResponses(...COMMON_ERRORS) },
      },
    },
    async (request) => {
      const instance = await instances.create(request.account, commandIdOf(request.headers));
      return { status: 200, message: 'Instance created', instance_id: instance.instanceId };
    },
  );

  app.get(
    '/reset_instance',
    {
      schema: {
        tags,
        summary: 'Reset an instance',
        description:
          'Logs the device out where linked, wipes its session data and pending sends, and returns the instance to state created. Same instance_id; webhook settings and history are kept.',
        querystring: InstanceQuery,
        response: { 200: envelope({ success: Type.Boolean() }), ...errorResponses(...COMMON_ERRORS, 404) },
      },
    },
    async (request) => {
      await instances.reset(request.account, request.query.instance_id, commandIdOf(request.headers));
      return { status: 200, message: 'Instance reset', success: true };
    },
  );

  app.get(
    '/status',
    {
      schema: {
        tags,
        summary: "An instance's state and details, now or at a past moment",
        description:
          'With `at` (ISO 8601 with a time zone), the instance as it was at that moment: its history folded up to then by the same code as today\'s status (state, webhook settings, linked number). An instance created later answers 404.',
        querystring: Type.Object({
          instance_id: InstanceId,
          at: Type.Optional(Type.String({ maxLength: 64, description: 'A past moment, ISO 8601', examples: ['2026-11-23T10:00:00Z'] })),
          access_token: AccessToken,
        }),
        response: { 200: envelope(InstanceView), ...errorResponses(...COMMON_ERRORS, 404) },
      },
    },
    async (request) => {
      const { instance_id: id, at } = request.query;
      const instance = await instances.get(request.account, id, at);
      return { status: 200, message: at ? `Instance status at ${at}` : 'Instance status', ...instanceView(instance) };
    },
  );

  app.get(
    '/list_instances',
    {
      schema: {
        tags,
        summary: "The calling account's instances",
        querystring: Type.Object({ access_token: AccessToken }),
        response: { 200: envelope({ instances: Type.Array(Type.Object(InstanceView)) }), ...errorResponses(...COMMON_ERRORS) },
      },
    },
    async (request) => {
      const { instances: list } = await instances.list(request.account);
      return { status: 200, message: `${list.length} instance(s)`, instances: list.map(instanceView) };
    },
  );

  app.get(
    '/history',
    {
      schema: {
        tags,
        summary: "An instance's audit trail",
        description:
          'Every event of the instance and of its messages, oldest first, optionally filtered. Pass next_cursor back as cursor (with the same filters) for the next page; null means the end. A page holds whole commits and at most limit events (one commit larger than limit is returned whole); with filters it may hold fewer, even none, with a next_cursor to go on.',
        querystring: Type.Object({
          instance_id: InstanceId,
          cursor: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'next_cursor of the previous page; 0 = the start' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
          types: Type.Optional(Type.String({ maxLength: 1024, description: 'Comma-separated event types', examples: ['MessageAccepted,MessageFailed'] })),
          since: Type.Optional(Type.String({ maxLength: 64, description: 'Events from this time on (ISO 8601)', examples: ['2026-11-23T10:00:00Z'] })),
          until: Type.Optional(Type.String({ maxLength: 64, description: 'Events up to this time (ISO 8601)' })),
          message_id: Type.Optional(Type.String({ maxLength: 128, description: "One message's whole life" })),
          access_token: AccessToken,
        }),
        response: {
          200: envelope({
            instance_id: InstanceId,
            events: Type.Array(
              Type.Object({
                sequence: Type.Integer({ description: 'Sequence of the commit that holds the event' }),
                stream: Type.String({ description: 'The stream: <instance_id>.instance or <instance_id>.message.<message_id>' }),
                type: Type.String({ examples: ['InstanceCreated'] }),
                schema_version: Type.Integer(),
                occurred_at: Type.String({ format: 'date-time' }),
                data: Type.Record(Type.String(), Type.Unknown()),
              }),
            ),
            next_cursor: Type.Union([Type.Integer(), Type.Null()]),
          }),
          ...errorResponses(...COMMON_ERRORS, 404),
        },
      },
    },
    async (request) => {
      const { instance_id: id, cursor = 0, limit = 100, types = '', since = '', until = '', message_id: messageId = '' } = request.query;
      const page = await instances.history({ account: request.account, instanceId: id, fromSequence: cursor, limit, types, since, until, messageId });
      const next = Number(page.nextSequence);
      return {
        status: 200,
        message: `${page.events.length} event(s)`,
        instance_id: id,
        events: page.events.map((e) => ({
          sequence: Number(e.sequence),
          stream: e.subject,
          type: e.type,
          schema_version: e.schemaVersion,
          occurred_at: e.occurredAt,
          data: JSON.parse(e.dataJson) as Record<string, unknown>,
        })),
        next_cursor: next > 0 ? next : null,
      };
    },
  );
};
