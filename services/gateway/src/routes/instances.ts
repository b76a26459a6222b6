import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AT_CLOCK_SKEW_MS, idempotencyKeyOf, INSTANCE_ID_PATTERN, newCommandId, PAGE_LIMIT } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import type { SessionsClientApi } from '../sessionsClient';
import {
  AccessToken,
  COMMON_ERRORS,
  envelope,
  errorResponses,
  EXAMPLE_ID,
  EXAMPLE_INSTANCE,
  EXAMPLE_QUOTAS,
  IdempotencyHeaders,
  InstanceId,
  InstanceQuery,
  InstanceView,
  NextCursor,
  PageLimit,
  StatusView,
} from '../schemas';
import { conflictResponse } from '../responseDocs';
import { instanceView, quotasView } from './views';

/** The command id of a request: its Idempotency-Key when given (so a retry repeats nothing), else a new one. */
const commandIdOf = (headers: Record<string, unknown>): string => idempotencyKeyOf(headers) ?? newCommandId();

export const instancesRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi; sessions: SessionsClientApi }> = async (
  app,
  { instances, sessions },
) => {
  const tags = ['Instances'];

  app.get(
    '/create_instance',
    {
      schema: {
        tags,
        operationId: 'createInstance',
        summary: 'Create an instance',
        description:
          'Creates a new instance for the calling account. With an Idempotency-Key header, a repeat answers the same instance. 409 instance_quota_reached when the account has its quota of instances (INSTANCE_QUOTA, default 100).',
        querystring: Type.Object({ access_token: AccessToken }),
        headers: IdempotencyHeaders,
        response: {
          200: envelope({ instance_id: InstanceId }, { message: 'Instance created', instance_id: EXAMPLE_ID }),
          ...errorResponses(...COMMON_ERRORS),
          ...conflictResponse(['instance_quota_reached']),
        },
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
        operationId: 'resetInstance',
        summary: 'Reset an instance',
        description:
          'Logs the device out where linked, wipes its session data and pending sends, and returns the instance to state created. Same instance_id; webhook settings and history are kept.',
        querystring: InstanceQuery,
        headers: IdempotencyHeaders,
        response: { 200: envelope({ success: Type.Boolean() }, { message: 'Instance reset', success: true }), ...errorResponses(...COMMON_ERRORS, 404) },
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
        operationId: 'getStatus',
        summary: "An instance's state and details, now or at a past moment",
        description: `With \`at\` (ISO 8601 with a time zone), the instance as it was at that moment: its history folded up to then by the same code as today's status (state, webhook settings, linked number). An instance created later answers 404. A moment more than ${AT_CLOCK_SKEW_MS / 1000} s after the server's clock (a future the history does not hold yet) answers 400 invalid_time, as a malformed time does.`,
        querystring: Type.Object({
          instance_id: InstanceId,
          at: Type.Optional(
            Type.String({
              maxLength: 64,
              description: `A past moment, ISO 8601 with a time zone; at most ${AT_CLOCK_SKEW_MS / 1000} s after the server's clock`,
              examples: ['2026-11-23T10:00:00Z'],
            }),
          ),
          access_token: AccessToken,
        }),
        response: {
          200: envelope(StatusView, { message: 'Instance status', ...EXAMPLE_INSTANCE, quotas: EXAMPLE_QUOTAS }),
          ...errorResponses(...COMMON_ERRORS, 404),
        },
      },
    },
    async (request) => {
      const { instance_id: id, at } = request.query;
      // The send counts are asked for together with the instance and shown only once it proved to be the caller's.
      const [instance, sends] = await Promise.all([instances.get(request.account, id, at), sessions.sendUsage({ instanceId: id })]);
      const message = at ? `Instance status at ${at}` : 'Instance status';
      return { status: 200, message, ...instanceView(instance), quotas: quotasView(instance, sends) };
    },
  );

  app.get(
    '/list_instances',
    {
      schema: {
        tags,
        operationId: 'listInstances',
        summary: "The calling account's instances, oldest first, a page at a time",
        description: 'Pass next_cursor back as cursor for the next page; null means the end. A cursor that is not from this list answers 400 invalid_cursor.',
        querystring: Type.Object({
          cursor: Type.Optional(Type.String({ pattern: INSTANCE_ID_PATTERN, description: 'next_cursor of the previous page' })),
          limit: PageLimit,
          access_token: AccessToken,
        }),
        response: {
          200: envelope(
            { instances: Type.Array(Type.Object(InstanceView)), next_cursor: NextCursor },
            { message: '1 instance(s)', instances: [EXAMPLE_INSTANCE], next_cursor: null },
          ),
          ...errorResponses(...COMMON_ERRORS),
        },
      },
    },
    async (request) => {
      const { cursor = '', limit = PAGE_LIMIT.default } = request.query;
      const { instances: list, nextCursor } = await instances.list(request.account, cursor, limit);
      return { status: 200, message: `${list.length} instance(s)`, instances: list.map(instanceView), next_cursor: nextCursor || null };
    },
  );
};
