import type { FastifyPluginAsyncTypebox, Static, TObject, TSchema } from '@fastify/type-provider-typebox';
import type { FastifyRequest, FastifySchema, preValidationHookHandler } from 'fastify';

/** The app a route plugin is given: Fastify with the TypeBox type provider. */
type TypeboxApp = Parameters<FastifyPluginAsyncTypebox>[0];

/** What each method has of its own in the OpenAPI document: clients/api names its calls after the operationId. */
export interface MethodDoc {
  operationId: string;
  summary: string;
}

export interface GetAndPostRoute<Fields extends TObject, Response extends { 200: TSchema }> {
  tags: string[];
  description: string;
  headers?: TObject;
  /** The GET's querystring and the POST's JSON body: the same fields, validated by the same schema. */
  fields: Fields;
  response: Response;
  get: MethodDoc;
  post: MethodDoc;
  /**
   * Which method is registered first, and so listed first under the path in the OpenAPI document (and the generated
   * client): POST unless told. It changes nothing else; it is there so the document stays as it was.
   */
  first?: 'get' | 'post';
  /** Checks of either method's raw input (the query or the body) before its schema's, for a fault with a code of its own. */
  preValidation?: preValidationHookHandler;
  /** Answers either method, given its validated fields (the query or the body) and the request (account, headers). */
  handler: (fields: Static<Fields>, request: FastifyRequest) => Promise<Static<Response[200]>>;
}

/**
 * Registers an operation the API takes both ways (seed spec: "POST and GET accept the same fields"): GET with its
 * fields in the querystring, POST with them as a JSON body, from one definition so the two cannot drift apart. Both
 * are ordinary routes of `app`'s scope, so authentication, scopes, the rate limit and the 405 `Allow` list see them as
 * they saw two hand-written routes.
 */
export const getAndPost = <Fields extends TObject, Response extends { 200: TSchema }>(
  app: TypeboxApp,
  path: string,
  { tags, description, headers, fields, response, get, post, first = 'post', preValidation, handler }: GetAndPostRoute<Fields, Response>,
): void => {
  const schemaOf = ({ operationId, summary }: MethodDoc, part: 'querystring' | 'body'): FastifySchema => ({
    tags,
    operationId,
    summary,
    description,
    ...(headers && { headers }),
    [part]: fields,
    response,
  });
  // Fastify has validated (and, for the query, coerced) the part against `fields` before a handler runs. The type
  // provider cannot carry that through a generic schema (its conditional types stay unresolved), so the routes are
  // typed with the plain FastifySchema and the input is asserted here, once; the answer is typed by `handler`.
  const validated = (input: unknown) => input as Static<Fields>;
  const hooks = preValidation ? { preValidation } : {};
  const registerGet = () => app.get(path, { schema: schemaOf(get, 'querystring'), ...hooks }, async (request) => handler(validated(request.query), request));
  const registerPost = () => app.post(path, { schema: schemaOf(post, 'body'), ...hooks }, async (request) => handler(validated(request.body), request));
  if (first === 'get') {
    registerGet();
    registerPost();
  } else {
    registerPost();
    registerGet();
  }
};
