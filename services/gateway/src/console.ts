import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** The console's files: the page and styles as written, the scripts as `npm run build` compiles them. */
const CONSOLE_DIR = resolve(__dirname, '../console');
const ROOTS = [resolve(CONSOLE_DIR, 'public'), resolve(CONSOLE_DIR, 'dist')];

/**
 * Strict policy: scripts and styles only from the gateway (no inline code, no CDN), QR codes as data: images, calls
 * only to the gateway itself, never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Serves the web console at `/console/` (`/` points there). It is a client of the public `/v1` API like any other. */
export const registerConsole = async (app: FastifyInstance): Promise<void> => {
  if (!existsSync(resolve(CONSOLE_DIR, 'dist/main.js')))
    app.log.warn({ dir: CONSOLE_DIR }, 'the console is not built (npm run build); /console will answer 404');
  // HEAD too, as the page it points to: a redirect acts on nothing (with `exposeHeadRoutes` off, a GET has no HEAD).
  for (const url of ['/', '/console']) app.route({ method: ['GET', 'HEAD'], url, handler: (_request, reply) => reply.redirect('/console/') });
  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('content-security-policy', CONSOLE_CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      reply.header('x-frame-options', 'DENY');
    });
    // One route per file, found when the gateway starts (`wildcard: false`), not one `/console/*` route: the
    // method check (plugins/methodNotAllowed.ts) then knows each file's path, so another method on the page or a file
    // answers 405 with `Allow: GET, HEAD` while a path that names no file stays a 404. The files are built before the
    // gateway starts (`npm run build`); one added later is served after a restart.
    await scope.register(fastifyStatic, {
      root: ROOTS,
      prefix: '/console/',
      decorateReply: false,
      index: ['index.html'],
      cacheControl: false,
      wildcard: false,
    });
  });
};
