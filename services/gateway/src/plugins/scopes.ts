import type { FastifyRequest } from 'fastify';
import { AppError, notFound, type Credential, type TokenScope } from '@wagw/lib';

/** The scope each route needs from an instance token (README "Keys"); a route not listed needs `manage`. */
const SCOPE_OF_ROUTE: Record<string, TokenScope> = {
  '/v1/send': 'send',
  '/v1/check_number': 'send',
  '/v1/send_group': 'send',
  '/v1/list_groups': 'send',
  // A read receipt is something the instance says on WhatsApp, like a send.
  '/v1/mark_read': 'send',
  '/v1/status': 'read',
  '/v1/history': 'read',
  '/v1/history/export': 'read',
  '/v1/webhook_deliveries': 'read',
  '/v1/events': 'read',
  // Received files are read like the messages in the history.
  '/v1/media': 'read',
};

/** Routes about the account rather than one instance: an instance token cannot call them. */
const ACCOUNT_ROUTES = new Set(['/v1/create_instance', '/v1/list_instances', '/v1/revoke_token']);

const forbidden = (code: string, message: string): AppError => new AppError('permission_denied', code, message);

/**
 * Every instance id the request names, in its query and in its body: a route reads one or the other (a POST its
 * body), so both must be the token's. Checking only the first found let `POST /send?instance_id=A` with a body
 * naming B send from B with a token for A.
 */
const instanceIdsOf = (request: FastifyRequest): unknown[] =>
  [(request.query as Record<string, unknown> | undefined)?.instance_id, (request.body as Record<string, unknown> | undefined)?.instance_id].filter(
    (id) => id !== undefined,
  );

/** The scope an instance token needs for a route (`/v1/send`), or null for an account route, which none may call. */
export const scopeOf = (route: string): TokenScope | null => (ACCOUNT_ROUTES.has(route) ? null : (SCOPE_OF_ROUTE[route] ?? 'manage'));

/**
 * The 403 of an instance token with `scopes` on a route: an account route, or a scope it lacks, says which; null when
 * the token may call it. authorize answers with it, and the OpenAPI document makes each operation's 403 example with it.
 */
export const instanceTokenRefusal = (route: string, scopes: readonly TokenScope[]): AppError | null => {
  const scope = scopeOf(route);
  if (scope === null) return forbidden('account_token_required', `${route} needs an account token; this token is limited to one instance`);
  if (!scopes.includes(scope)) return forbidden('insufficient_scope', `${route} needs the ${scope} scope; this token has ${scopes.join(', ')}`);
  return null;
};

/**
 * Holds an instance token to its instance and scopes: an account route or a missing scope is a 403 that says which;
 * another instance answers 404, exactly like another account's. An account token may do everything.
 */
export const authorize = (credential: Credential, request: FastifyRequest): void => {
  if (credential.instanceId === null) return;
  const refusal = instanceTokenRefusal(request.routeOptions.url ?? '', credential.scopes);
  if (refusal) throw refusal;
  if (instanceIdsOf(request).some((id) => id !== credential.instanceId)) throw notFound('instance_not_found', 'Instance not found');
};
