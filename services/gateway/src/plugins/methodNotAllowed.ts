import type { FastifyInstance } from 'fastify';
import { methodNotAllowedAnswer, routeNotFoundBody } from '@wagw/lib';
import { isCorsPreflightRoute } from './cors';

/**
 * The path as the router matched it: percent-encoded characters decoded (`/v1/st%61tus` is `/v1/status`), but not
 * those that would change the path's shape (`decodeURI` keeps `%2F`, `%3F`, `%23`); a malformed one stays as it came.
 */
const routedPath = (url: string): string => {
  const path = url.split('?')[0] ?? '';
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
};

/** The methods a path takes (its routes' and those of every wildcard route above it); empty for an unknown path. */
export type MethodsOf = (path: string) => ReadonlySet<string>;

/**
 * Answers a known path called with a method it does not take with 405 and `Allow` (RFC 9110 §15.5.6), and an unknown
 * path with 404; both with the JSON error body. Must be registered before the routes, so it sees each one added.
 * `Allow` lists the methods registered, nothing more: with `exposeHeadRoutes` off (app.ts) a GET route has no HEAD
 * unless it registers one (the static files do), so a HEAD there is a 405 too. A wildcard route (`/v1/docs/*`, the
 * docs page's files) makes every path under its prefix known, with its methods. Returns the methods of a path, as
 * it answers them (the OpenAPI document's 405 examples).
 */
export const registerMethodNotAllowed = (app: FastifyInstance): MethodsOf => {
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', ({ url, method, routePath, prefixTrailingSlash }) => {
    const listed = Array.isArray(method) ? method : [method];
    // CORS preflights (plugins/cors.ts) take OPTIONS on every path: that makes no path known.
    if (isCorsPreflightRoute(url, listed)) return;
    // A plugin's root route ('/' under a prefix) is routed at `/prefix` and, by Fastify's default ('both'), at
    // `/prefix/` too, whose registration runs no onRoute hook: without this, POST /v1/docs/ was a 404.
    const urls = routePath === '' && (prefixTrailingSlash ?? 'both') === 'both' ? [url, `${url}/`] : [url];
    for (const path of urls) {
      const methods = methodsByPath.get(path) ?? new Set<string>();
      for (const m of listed) methods.add(m);
      methodsByPath.set(path, methods);
    }
  });
  /** The methods of the path's own route and of every wildcard route above it. */
  const methodsOf = (path: string): Set<string> => {
    const methods = new Set(methodsByPath.get(path));
    for (const [url, more] of methodsByPath) if (url.endsWith('*') && path.startsWith(url.slice(0, -1))) for (const m of more) methods.add(m);
    return methods;
  };
  app.setNotFoundHandler((request, reply) => {
    const path = routedPath(request.url);
    const allowed = methodsOf(path);
    // A method the path takes that still ends here found nothing there (a file the docs page does not have): 404.
    if (allowed.size > 0 && !allowed.has(request.method)) {
      const { allow, body } = methodNotAllowedAnswer(request.method, path, allowed);
      return reply.code(405).header('allow', allow).send(body);
    }
    return reply.code(404).send(routeNotFoundBody(request.method, path));
  });
  return methodsOf;
};
