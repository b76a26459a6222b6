import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { invalidArgument, isPhoneNumber, LIMITS } from '@wagw/lib';
import type { InstancesClientApi } from '../instancesClient';
import type { SessionsClientApi } from '../sessionsClient';
import { MAX_URL_LENGTH } from '../plugins/limits';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, InstanceId } from '../schemas';
import { conflictResponse } from '../responseDocs';

const NumberStatus = Type.Object({
  number: Type.String(),
  exists: Type.Boolean({ description: 'Whether the number has a WhatsApp account' }),
  jid: Type.Union([Type.String(), Type.Null()], { description: "The account's WhatsApp id, null when it has none" }),
});

/** `number` or `numbers` (comma-separated), each a phone number; at most LIMITS.numbersPerCheck. */
const numbersOf = (query: { number?: string; numbers?: string }): string[] => {
  if ((query.number === undefined) === (query.numbers === undefined)) throw invalidArgument('invalid_numbers', 'Give either number or numbers');
  const numbers = query.number !== undefined ? [query.number] : (query.numbers ?? '').split(',').map((n) => n.trim());
  if (numbers.length > LIMITS.numbersPerCheck) throw invalidArgument('too_many_numbers', `numbers holds at most ${LIMITS.numbersPerCheck} numbers`);
  const bad = numbers.find((n) => !isPhoneNumber(n));
  if (bad !== undefined) throw invalidArgument('invalid_number', `Each number must be 7 to 15 international digits without +, got '${bad}'`);
  return [...new Set(numbers)];
};

/** check_number: which numbers are on WhatsApp, asked over the instance's connection (throttled, cached). */
export const numbersRoutes: FastifyPluginAsyncTypebox<{ instances: InstancesClientApi; sessions: SessionsClientApi }> = async (
  app,
  { instances, sessions },
) => {
  app.get(
    '/check_number',
    {
      schema: {
        tags: ['Messages'],
        operationId: 'checkNumbers',
        summary: 'Whether numbers are on WhatsApp',
        description: `Give \`number\`, or \`numbers\` (comma-separated, up to ${LIMITS.numbersPerCheck}). Needs a connected instance (409 otherwise). Answers are cached per instance (a day for numbers on WhatsApp, an hour for the others), and each instance may check a burst of numbers, then about 30 a minute (429 with the wait beyond): bulk lookups get numbers banned.`,
        querystring: Type.Object({
          instance_id: InstanceId,
          // No schema pattern: numbersOf checks `number` with the rule of `numbers`, so both answer invalid_number rather
          // than the schema's generic invalid_request (the URL's length cap bounds it).
          number: Type.Optional(Type.String({ description: 'International digits without +, 7 to 15 (400 invalid_number otherwise)' })),
          // As long as a URL may be: a list over the count (with spaces after its commas, say) is told too_many_numbers, not
          // the schema's invalid_request; the count is checked after the split.
          numbers: Type.Optional(Type.String({ maxLength: MAX_URL_LENGTH, description: 'Comma-separated numbers' })),
          access_token: AccessToken,
        }),
        response: {
          200: envelope({ numbers: Type.Array(NumberStatus) }),
          ...errorResponses(...COMMON_ERRORS, 404, 429),
          ...conflictResponse(['not_connected'], 'The instance is not connected: numbers are checked over its connection'),
        },
      },
    },
    async (request) => {
      const numbers = numbersOf(request.query);
      const instance = await instances.get(request.account, request.query.instance_id);
      const { results } = await sessions.checkNumbers({ instanceId: instance.instanceId, numbers });
      return {
        status: 200,
        message: 'Checked',
        numbers: results.map(({ number, exists, jid }) => ({ number, exists, jid: jid || null })),
      };
    },
  );
};
