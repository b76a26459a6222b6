/**
 * The 405 of `method` on `path`, which takes `allowed`: the `Allow` header and the body (RFC 9110 §15.5.6). Every HTTP
 * server of the project answers with it: the gateway's not-found handler, the services' ops servers, and the OpenAPI
 * document's 405 examples.
 */
export const methodNotAllowedAnswer = (method: string, path: string, allowed: Iterable<string>) => {
  const allow = [...allowed].sort().join(', ');
  return { allow, body: { error: `Method ${method} is not allowed on ${path}; use ${allow}`, code: 'method_not_allowed' } };
};

/** The 404 body of a path no route serves. */
export const routeNotFoundBody = (method: string, path: string) => ({ error: `Route ${method} ${path} not found`, code: 'route_not_found' });
