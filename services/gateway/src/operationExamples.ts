import { Type } from '@sinclair/typebox';
import { methodNotAllowedAnswer, TOKEN_SCOPES } from '@wagw/lib';
import type { FastifySchema } from 'fastify';
import { invalidRequestAnswer } from './plugins/errors';
import { bodyTooLargeAnswer } from './plugins/limits';
import { type MethodsOf } from './plugins/methodNotAllowed';
import { undecodableQueryAnswer } from './plugins/querystring';
import { instanceTokenRefusal, scopeOf } from './plugins/scopes';
import { compileValidator } from './plugins/validation';
import { errorResponse, RESPONSE_HEADERS, type ErrorExample } from './responseDocs';

/**
 * Each operation's own examples of the errors whose words differ by operation: 400 (its schema), 403 (its scope, or
 * that it is an account operation), 405 (its path and the methods it takes) and 413 (the body limit). Each is made by
 * the very code that answers it, from the route's facts, so the document cannot say what the server does not. Made
 * when @fastify/swagger builds the document (its `transform`): only then are all of a path's methods known.
 */

/** What the examples are made from besides the route: the gateway's settings and its other routes. */
export interface OperationFacts {
  bodyLimit: number;
  /** The methods each path takes (registerMethodNotAllowed). */
  methodsOf: MethodsOf;
}

interface Route {
  url: string;
  method: string | string[];
}

/** The parts of a request Fastify validates, in the order it validates them: the first refused is the answer. */
const PARTS = ['params', 'body', 'querystring', 'headers'] as const;

/**
 * The 400 of the operation called with nothing (an empty body for a POST, no query for a GET): its schema's first
 * refusal, run through the server's own validator and error wording. An operation whose schema takes that (nothing
 * required) shows the 400 every route answers: a query that is not %-encoded UTF-8.
 */
const badRequest = (schema: FastifySchema, route: Route): ErrorExample => {
  const method = Array.isArray(route.method) ? (route.method[0] ?? 'GET') : route.method;
  for (const part of PARTS) {
    if (schema[part] === undefined) continue;
    const validate = compileValidator({ schema: schema[part], method, url: route.url, httpPart: part });
    if (validate({}) === false) return invalidRequestAnswer(part, validate.errors ?? []);
  }
  return undecodableQueryAnswer('%ff');
};

/** The 403 of an instance token with another scope than the one the operation needs (any, on an account operation). */
const forbidden = (route: Route): { description: string; example: ErrorExample } | null => {
  const needed = scopeOf(route.url);
  const other = TOKEN_SCOPES.find((scope) => scope !== needed) ?? TOKEN_SCOPES[0];
  const refusal = instanceTokenRefusal(route.url, [other]);
  if (!refusal) return null;
  const description =
    needed === null
      ? 'An instance token: this operation is about the account, and takes an account token (`account_token_required`)'
      : `An instance token without the \`${needed}\` scope (\`insufficient_scope\`)`;
  return { description, example: { error: refusal.message, code: refusal.code } };
};

/** A method the path does not take, to show its 405 with. */
const OTHER_METHODS = ['DELETE', 'PUT', 'PATCH', 'POST', 'GET'];

/** The 405 of another method on the route's path, with the path's own `Allow` (its GET and POST forms alike). */
const notAllowed = (route: Route, methodsOf: MethodsOf) => {
  const allowed = methodsOf(route.url);
  const method = OTHER_METHODS.find((m) => !allowed.has(m)) ?? 'DELETE';
  const { allow, body } = methodNotAllowedAnswer(method, route.url, allowed);
  return { example: body, headers: { Allow: Type.String({ description: RESPONSE_HEADERS.Allow.description, example: allow }) } };
};

/** Whether the route documents this status with an example of its own (media's 413), which is kept. */
const hasOwnExample = (response: unknown): boolean => typeof response === 'object' && response !== null && 'examples' in response;

/** The route's schema with its operation's own 400, 403, 405 and 413 examples, for the statuses it documents. */
export const operationExamples =
  ({ bodyLimit, methodsOf }: OperationFacts) =>
  (schema: FastifySchema | undefined, route: Route): FastifySchema | undefined => {
    const response = schema?.response as Record<string, unknown> | undefined;
    if (!schema || !response) return schema;
    const made: Record<string, () => Parameters<typeof errorResponse>[1] | null> = {
      400: () => ({ example: badRequest(schema, route) }),
      403: () => forbidden(route),
      405: () => notAllowed(route, methodsOf),
      413: () => ({ example: bodyTooLargeAnswer(bodyLimit) }),
    };
    const own = Object.entries(made).flatMap(([status, make]) => {
      if (response[status] === undefined || hasOwnExample(response[status])) return [];
      const doc = make();
      return doc ? [[status, errorResponse(Number(status), doc)] as const] : [];
    });
    return { ...schema, response: { ...response, ...Object.fromEntries(own) } };
  };
