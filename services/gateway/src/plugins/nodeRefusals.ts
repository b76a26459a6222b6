import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

/**
 * Two requests Node's HTTP server answers itself, before Fastify sees them, with an empty body where every other
 * refusal is the `{ error, code }` envelope: an `Expect` other than `100-continue` (417) and an HTTP/1.1 request
 * without a Host header (400). Both are answered here in the envelope, with the same statuses.
 */

/** Fastify's options for it: Node's own Host check off, the hook below makes the same one (registerNodeRefusals). */
export const nodeRefusalOptions = { http: { requireHostHeader: false } } as const;

const json = (status: number, body: { error: string; code: string }) => ({ status, body });

const EXPECTATION_FAILED = json(417, { error: 'Only Expect: 100-continue is supported; send the request without Expect', code: 'expectation_failed' });
const MISSING_HOST = json(400, { error: 'An HTTP/1.1 request must carry a Host header (RFC 9112 §3.2)', code: 'bad_request' });

export const registerNodeRefusals = (app: FastifyInstance, log: FastifyBaseLogger): void => {
  // With a listener, Node hands the request here instead of answering 417 itself; no route runs (nor would it: the
  // client waits to learn whether to send its body), and the connection closes, its unread body with it.
  app.server.on('checkExpectation', (request, response) => {
    log.debug({ expect: request.headers.expect }, 'request with an unsupported Expect refused');
    const text = JSON.stringify(EXPECTATION_FAILED.body);
    response.writeHead(EXPECTATION_FAILED.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      connection: 'close',
    });
    response.end(text);
  });
  // Node's own rule (requireHostHeader): HTTP/1.1 without Host is a 400; HTTP/1.0 needs none, an empty Host is one.
  app.addHook('onRequest', async (request, reply) => {
    const { httpVersionMajor, httpVersionMinor } = request.raw;
    if (httpVersionMajor !== 1 || httpVersionMinor !== 1 || request.headers.host !== undefined) return undefined;
    return reply.code(MISSING_HOST.status).header('connection', 'close').send(MISSING_HOST.body);
  });
};
