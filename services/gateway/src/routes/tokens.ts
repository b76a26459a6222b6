import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { assertTokenId } from '@wagw/lib';
import type { Revocations } from '../auth/revocations';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses } from '../schemas';

export const tokensRoutes: FastifyPluginAsyncTypebox<{ revocations: Revocations }> = async (app, { revocations }) => {
  app.get(
    '/revoke_token',
    {
      schema: {
        tags: ['Tokens'],
        operationId: 'revokeToken',
        summary: "Revoke one of the account's tokens",
        description:
          'Needs an account token. token_id is the id printed when the token was issued (its jti claim). Every gateway replica refuses the token within a second (401 token_revoked). Revoking a token of another account has no effect. Tokens are not stored, so any well-formed id is taken (and answered alike).',
        querystring: Type.Object({
          token_id: Type.String({ pattern: '^[0-9a-f]{32}$', description: 'The token id (jti)', examples: ['5f0c3e1a9b7d4c2e8f6a0b1c2d3e4f5a'] }),
          access_token: AccessToken,
        }),
        response: {
          200: envelope(
            { success: Type.Boolean() },
            { message: 'Token id revoked: a token of this account with this id is refused from now on', success: true },
          ),
          ...errorResponses(...COMMON_ERRORS),
        },
      },
    },
    async (request) => {
      assertTokenId(request.query.token_id);
      await revocations.revoke(request.account, request.query.token_id);
      return { status: 200, message: 'Token id revoked: a token of this account with this id is refused from now on', success: true };
    },
  );
};
