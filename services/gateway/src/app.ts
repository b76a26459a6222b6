import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { registerOpsRoutes, type Credential, type Logger } from '@wagw/lib';
import type { Revocations } from './auth/revocations';
import { tokensRoutes } from './routes/tokens';
import type { InstancesClientApi } from './instancesClient';
import type { WebhooksClientApi } from './webhooksClient';
import type { SessionsClientApi } from './sessionsClient';
import { sessionsRoutes } from './routes/sessions';
import { pairingRoutes } from './routes/pairing';
import { inboundRoutes } from './routes/inbound';
import { numbersRoutes } from './routes/numbers';
import { messagesRoutes } from './routes/messages';
import { groupsRoutes } from './routes/groups';
import { sandboxRoutes } from './routes/sandbox';
import { registerAuth } from './plugins/auth';
import { registerSingleHeaders } from './plugins/singleHeaders';
import { registerCors, type CorsOrigins } from './plugins/cors';
import { frameworkErrorOptions, registerErrorHandling } from './plugins/errors';
import { registerHttpMetrics } from './plugins/httpMetrics';
import { registerStrictJsonBody } from './plugins/jsonBody';
import { nodeRefusalOptions, registerNodeRefusals } from './plugins/nodeRefusals';
import { registerShutdownRefusal, shutdownOptions } from './plugins/shutdown';
import { DEFAULT_IDLE_TIMEOUT_MS } from './config';
import { registerLimits } from './plugins/limits';
import { requestLoggerFactory } from './plugins/requestLogger';
import { registerDocsHead } from './plugins/docsHead';
import { registerMethodNotAllowed } from './plugins/methodNotAllowed';
import { parseQuery, registerStrictQuery } from './plugins/querystring';
import { registerValidation } from './plugins/validation';
import { createRateLimiter, type RateLimitSettings } from './plugins/rateLimit';
import type { WindowCounter } from './rateLimit/windowCounter';
import { historyRoutes } from './routes/history';
import { instancesRoutes } from './routes/instances';
import { erasureRoutes } from './routes/erasure';
import { webhookRoutes } from './routes/webhook';
import { deliveriesRoutes } from './routes/deliveries';
import { replayRoutes } from './routes/replay';
import { eventsRoutes } from './routes/events';
import { registerConsole } from './console';
import { registerResponseDocs } from './responseDocs';
import { operationExamples } from './operationExamples';
import { SSE_DEFAULTS, type SseOptions } from './events/sseConnection';

export interface GatewayDeps {
  instances: InstancesClientApi;
  webhooks: WebhooksClientApi;
  sessions: SessionsClientApi;
  /** The sandbox routes exist only with the sandbox connector. */
  sandbox: boolean;
  verifyToken: (token: string | undefined) => Credential;
  /** Revoked tokens (`noRevocations` without NATS). */
  revocations: Revocations;
  logger: Logger;
  bodyLimit?: number;
  /** Requests per account and per address without a valid credential, counted with the other replicas. */
  rateLimit?: { counter: WindowCounter; settings: RateLimitSettings };
  /** Live events (`/v1/events`): heartbeat interval and per-reader buffer bound. */
  sse?: Partial<SseOptions>;
  /**
   * A connection on which no byte moved this long is closed (`HTTP_IDLE_TIMEOUT_MS`): an export or a stream whose
   * client stopped reading would hold its scan, or its live feed, for good. Above every wait the API makes on purpose.
   */
  idleTimeoutMs?: number;
  /** `CORS_ORIGINS`: the origins of web pages that may call the API from a browser; absent, none. */
  corsOrigins?: CorsOrigins;
}

/** Where the API docs page (Swagger UI) lives. */
const DOCS_PREFIX = '/v1/docs';

const API_DESCRIPTION = `Send and receive WhatsApp messages through linked instances.

Authenticate with a JWT as \`Authorization: Bearer <token>\` or as \`access_token\` (query, or JSON body for POST):
one credential per request; more than one answers 401 \`invalid_token\`.
Successes answer \`{ status: 200, message, ... }\`; errors answer \`{ error, code }\` with 400 (invalid input),
401 (missing or bad credential), 403 (outside an instance token's scopes), 404 (unknown instance, or another
account's), 405 (another method than the path takes; \`Allow\` lists them), 409 (wrong state), 413 (too large),
414 (URL over 8 KiB: send long text with POST), 415 (a body that is not application/json in UTF-8, or is compressed), 429 (rate limited) or 503
(a dependency is down); a 429 or 503 carries \`Retry-After\` (seconds). Where the gateway limits requests, its answers
carry \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`.`;

/** The gateway as a Fastify app: docs, ops routes, and the authenticated `/v1` API. */
export const buildGateway = async ({
  instances,
  webhooks,
  sessions,
  sandbox,
  verifyToken,
  revocations,
  logger,
  bodyLimit = 64 * 1024,
  rateLimit,
  sse = {},
  idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS,
  corsOrigins,
}: GatewayDeps): Promise<FastifyInstance> => {
  const loggerInstance: FastifyBaseLogger = logger;
  const app = Fastify({
    loggerInstance,
    // Fastify's own request lines would log URLs with access_token; the metrics hook logs them redacted instead.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: requestLoggerFactory,
    bodyLimit,
    connectionTimeout: idleTimeoutMs,
    // Fastify's automatic HEAD route runs the GET handler and drops the body, so a HEAD on an API route would send a
    // message or create an instance (the GET forms act), and hang on /v1/events. HEAD is answered only where a route
    // registers it (static files, the OpenAPI document, the ops routes); elsewhere it is a 405 with the truthful Allow list.
    exposeHeadRoutes: false,
    routerOptions: { querystringParser: parseQuery },
    ...frameworkErrorOptions(loggerInstance),
    ...nodeRefusalOptions,
    ...shutdownOptions,
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Before the limiter: a browser's preflight carries no credential and is answered uncounted, and the limiter's 429
  // carries the CORS headers, so a page can read it.
  if (corsOrigins) await registerCors(app, corsOrigins);
  // The first onRequest hook after CORS: every API request is counted (and over the limit refused) before any other work or refusal.
  const limiter = rateLimit && (await createRateLimiter(app, rateLimit.counter, rateLimit.settings));
  const registerApiAuth = registerAuth(app, { verify: verifyToken, revocations, limiter });
  registerNodeRefusals(app, loggerInstance);
  const closing = registerShutdownRefusal(app);
  registerValidation(app);
  registerStrictJsonBody(app);
  registerErrorHandling(app);
  registerLimits(app, bodyLimit);
  registerStrictQuery(app);
  registerDocsHead(app, DOCS_PREFIX);
  const methodsOf = registerMethodNotAllowed(app);
  const withOperationExamples = operationExamples({ bodyLimit, methodsOf });
  registerHttpMetrics(app);

  await app.register(swagger, {
    hideUntagged: true,
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'WhatsApp gateway API',
        version: '2.0.0',
        description: API_DESCRIPTION,
        license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
      },
      servers: [{ url: '/v1' }],
      tags: [
        { name: 'Instances', description: 'Create, link, inspect and reset instances' },
        { name: 'Webhook', description: "The instance's event webhook" },
        { name: 'Messages', description: 'Send text and media' },
        { name: 'Groups', description: "The account's WhatsApp groups: list them, send to them" },
        { name: 'Tokens', description: 'Revoke tokens' },
        ...(sandbox ? [{ name: 'Sandbox', description: 'The simulated platform (WA_CONNECTOR=sandbox): play the phone' }] : []),
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          access_token: { type: 'apiKey', in: 'query', name: 'access_token' },
        },
      },
      security: [{ bearer: [] }, { access_token: [] }],
    },
    transform: ({ schema, url, route }) => ({ schema: withOperationExamples(schema, route) ?? schema, url: url.replace(/^\/v1/, '') }),
  });
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX });
  // HEAD too (RFC 9110 §9.1): the document acts on nothing, like the static files.
  app.route({ method: ['GET', 'HEAD'], url: '/v1/openapi.json', handler: async () => app.swagger() });

  await registerConsole(app);

  // Ready = this replica can reach its services. Not NATS, nor the services' own readiness: those are shared by every
  // gateway replica, so checking them would take the whole fleet out of a load balancer at once for an outage that is
  // not this replica's, and clients would get the balancer's bare 503 instead of our event_store_unavailable answer.
  registerOpsRoutes(app, async () => {
    if (!(await instances.ready(1_000))) return { ready: false, reason: 'instances service is unreachable' };
    if (!(await webhooks.ready(1_000))) return { ready: false, reason: 'webhooks service is unreachable' };
    if (!(await sessions.ready(1_000))) return { ready: false, reason: 'sessions service is unreachable' };
    return { ready: true };
  });

  await app.register(
    async (api) => {
      // Before the routes: it documents on each of them the answers every /v1 route gives alike.
      registerResponseDocs(api);
      registerApiAuth(api);
      registerSingleHeaders(api);
      await api.register(instancesRoutes, { instances, sessions });
      await api.register(erasureRoutes, { instances });
      await api.register(historyRoutes, { instances, revocations });
      await api.register(webhookRoutes, { instances });
      await api.register(deliveriesRoutes, { webhooks });
      await api.register(tokensRoutes, { revocations });
      await api.register(replayRoutes, { webhooks });
      await api.register(eventsRoutes, { webhooks, sse: { ...SSE_DEFAULTS, ...sse }, revocations, closing });
      await api.register(sessionsRoutes, { instances, sessions });
      await api.register(pairingRoutes, { instances, sessions });
      await api.register(numbersRoutes, { instances, sessions });
      await api.register(messagesRoutes, { sessions });
      await api.register(groupsRoutes, { instances, sessions });
      await api.register(inboundRoutes, { instances, sessions });
      if (sandbox) await api.register(sandboxRoutes, { instances, sessions });
    },
    { prefix: '/v1' },
  );
  return app;
};
