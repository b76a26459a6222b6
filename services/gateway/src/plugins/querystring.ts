import type { FastifyInstance } from 'fastify';

export type ParsedQuery = Record<string, string | string[]>;

/**
 * Queries whose parse met a component that is not %-encoded UTF-8, with that component's (raw) name. The parser runs
 * inside the router, where an exception would not become an answer, so it only marks the query; the hook refuses it.
 */
const undecodable = new WeakMap<ParsedQuery, string>();

/** A component as a form encodes it: `+` is a space; throws URIError on a bad escape (`%ff`, `%zz`, a lone `%`). */
const decodeComponent = (raw: string): string => decodeURIComponent(raw.replace(/\+/g, ' '));

/**
 * The gateway's querystring parser: the forms Fastify's default (fast-querystring) reads, read the same way (`a` is
 * `a=`, a repeated name an array), except that an undecodable component is not kept as its raw text (`%ff%fe` was
 * sent as those six characters): the query is marked, and answers 400.
 */
export const parseQuery = (query: string): ParsedQuery => {
  // No prototype: a parameter named __proto__ or constructor is a parameter like any other.
  const result = Object.create(null) as ParsedQuery;
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    let name: string;
    let value: string;
    try {
      name = decodeComponent(rawName);
      value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1));
    } catch {
      undecodable.set(result, rawName);
      return result;
    }
    const previous = result[name];
    if (previous === undefined) result[name] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else result[name] = [previous, value];
  }
  return result;
};

/**
 * The 400 of a query with a component that is not %-encoded UTF-8 (its raw name): every route answers it, so it is
 * also the OpenAPI document's 400 example of an operation whose schema takes an empty input (operationExamples.ts).
 */
export const undecodableQueryAnswer = (name: string) => ({
  error: `Invalid querystring: parameter ${JSON.stringify(name.slice(0, 64))} is not %-encoded UTF-8 (e.g. %C3%A9 for é)`,
  code: 'invalid_request',
});

/** Refuses a request whose query `parseQuery` could not decode: 400, before anything else runs. */
export const registerStrictQuery = (app: FastifyInstance): void => {
  app.addHook('onRequest', async (request, reply) => {
    const name = undecodable.get(request.query as ParsedQuery);
    if (name === undefined) return undefined;
    return reply.code(400).send(undecodableQueryAnswer(name));
  });
};
