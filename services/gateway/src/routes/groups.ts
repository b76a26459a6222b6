import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { assertGroupId } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import type { SessionsClientApi } from '../sessionsClient';
import { AccessToken, COMMON_ERRORS, EXAMPLE_ID, envelope, errorResponses, IdempotencyHeaders, InstanceId } from '../schemas';
import { conflictResponse } from '../responseDocs';
import { getAndPost } from './getAndPost';
import { SEND_DESCRIPTION, sendContentFields, SendResponse, sendInputFirst, sendTo } from './sendContent';

const EXAMPLE_GROUP = '120363025246125486@g.us';

const GroupFields = Type.Object(
  {
    group_id: Type.String({
      maxLength: 64,
      description: 'The group: `<5-20 digits>@g.us` or `<5-20 digits>-<5-20 digits>@g.us`, as list_groups answers it (400 invalid_group_id otherwise)',
      examples: [EXAMPLE_GROUP],
    }),
    ...sendContentFields,
  },
  { examples: [{ instance_id: EXAMPLE_ID, group_id: EXAMPLE_GROUP, type: 'text', message: 'The meeting moves to 3 pm' }] },
);

const Group = Type.Object({
  id: Type.String({ description: 'The group id, for send_group', examples: [EXAMPLE_GROUP] }),
  subject: Type.String({ description: "The group's name" }),
  participants: Type.Integer({ minimum: 0, description: 'How many take part, the account included' }),
});

/** list_groups and send_group: send_group is `send` with a group id instead of a number (the same code path). */
export const groupsRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi; sessions: SessionsClientApi }> = async (app, { instances, sessions }) => {
  const tags = ['Groups'];
  app.get(
    '/list_groups',
    {
      schema: {
        tags,
        operationId: 'listGroups',
        summary: 'The groups the linked account takes part in',
        description: "Asked over the instance's connection (409 not_connected otherwise): id, subject and participant count of each group.",
        querystring: Type.Object({ instance_id: InstanceId, access_token: AccessToken }),
        response: {
          200: envelope({ groups: Type.Array(Group) }, { message: 'Groups', groups: [{ id: EXAMPLE_GROUP, subject: 'Team', participants: 12 }] }),
          ...errorResponses(...COMMON_ERRORS, 404),
          ...conflictResponse(['not_connected']),
        },
      },
    },
    async (request) => {
      const instance = await instances.get(request.account, request.query.instance_id);
      const { groups } = await sessions.listGroups({ instanceId: instance.instanceId });
      return { status: 200, message: 'Groups', groups: groups.map(({ id, subject, participants }) => ({ id, subject, participants })) };
    },
  );

  getAndPost(app, '/send_group', {
    tags,
    description: `Like send, to a group. ${SEND_DESCRIPTION}`,
    headers: IdempotencyHeaders,
    fields: GroupFields,
    response: SendResponse,
    post: { operationId: 'sendGroupMessage', summary: 'Send a message to a group' },
    get: { operationId: 'sendGroupMessageQuery', summary: 'Send a message to a group (query form)' },
    preValidation: sendInputFirst('group_id'),
    // Checked here, not only by the sessions service: over gRPC an empty group_id is no group_id at all, and the send
    // falls back to its number rule (invalid_number). Only this route knows the request names a group.
    handler: (fields, request) => {
      assertGroupId(fields.group_id);
      return sendTo(sessions, request.account, { groupId: fields.group_id }, fields, request.headers);
    },
  });
};
