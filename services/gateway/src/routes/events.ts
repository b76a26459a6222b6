import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { WEBHOOK_EVENT_TYPE_NAMES } from '@wagw/lib';
import { credentialRefusal, type Revocations } from '../auth/revocations';
import type { WebhooksClientApi } from '../webhooksClient';
import { openLiveCall } from '../events/liveCall';
import { serveSse, type SseOptions } from '../events/sseConnection';
import { AccessToken, TypesFilter, COMMON_ERRORS, errorResponses, InstanceId } from '../schemas';

// The types come from the list the webhooks service delivers (a hand-written one missed 3 of 13).
const DESCRIPTION = `Server-sent events (text/event-stream): the account's events, or one instance's with instance_id, with exactly the
payloads and ids of the webhooks. Each event is \`id: <webhook id>\`, \`event: <type>\`, \`data: <the webhook JSON body>\`.
Types: ${WEBHOOK_EVENT_TYPE_NAMES.join(', ')}.
Without Last-Event-ID the stream starts with the next event; with it, right after that event (nothing lost, nothing
repeated). Comment lines (\`: heartbeat\`) keep idle streams open. A reader that falls too far behind, a service restart or a gateway shutdown end the stream
with a last \`event: end\` whose data is \`{ error, code }\` (\`slow_reader\`, \`stream_ended\`, \`server_shutdown\`, \`token_revoked\`, \`token_expired\`, ...):
reconnect with Last-Event-ID. 400 \`invalid_types\` for an unknown type or only commas and blanks (\`types=,\`), \`invalid_last_event_id\` for an id that is
not one (or lies past the end of the log); 404 for an unknown or another account's instance.`;

const SHUTTING_DOWN = 'The gateway is shutting down; reconnect with Last-Event-ID';

/** How often an open stream checks its token (revoked, expired): a stream ends within this of either. */
const CREDENTIAL_CHECK_MS = 1_000;

/** `GET /v1/events`: live events as server-sent events, served from the webhooks service's live feed. */
export const eventsRoutes: FastifyPluginAsyncTypebox<{
  webhooks: WebhooksClientApi;
  sse: SseOptions;
  revocations: Revocations;
  /** Whether the gateway is shutting down (`registerShutdownRefusal`). */
  closing: () => boolean;
}> = async (app, { webhooks, sse, revocations, closing }) => {
  const open = new Set<{ end(reason: string): void }>();
  // Open streams would keep the server from closing; they end first, and their readers reconnect elsewhere.
  app.addHook('preClose', async () => {
    for (const stream of open) stream.end(SHUTTING_DOWN);
  });

  app.get(
    '/events',
    {
      schema: {
        tags: ['Webhook'],
        operationId: 'streamEvents',
        summary: 'Live events (server-sent events), with the webhook payloads and ids',
        description: DESCRIPTION,
        querystring: Type.Object({
          instance_id: Type.Optional(InstanceId),
          types: TypesFilter('webhook event types', WEBHOOK_EVENT_TYPE_NAMES, 'message.received,message.read'),
          access_token: AccessToken,
        }),
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({ maxLength: 64, description: 'Resume right after this event id (browsers send it when they reconnect)' }),
          ),
        }),
        response: {
          // Only the stream is text/event-stream: a refusal before it starts is the JSON error body (`produces` would
          // have put every status under text/event-stream).
          200: {
            description: 'The stream: id, event and data (the webhook JSON body) per event',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
          ...errorResponses(...COMMON_ERRORS, 404),
        },
      },
    },
    async (request, reply) => {
      // An instance token's stream is its instance's, named or not ('' would be the whole account's).
      const { instance_id: instanceId = request.credential?.instanceId ?? '', types = '' } = request.query;
      // A reader that goes away while the call opens (until the webhooks service's `ready`) cancels it there.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const call = await openLiveCall(
        webhooks.streamEvents,
        {
          account: request.account,
          instanceId,
          // Split only: blanks travel on, so the webhooks service tells `types=,` (a 400) from an empty `types=` (all).
          types: types === '' ? [] : types.split(','),
          lastEventId: request.headers['last-event-id'] ?? '',
        },
        gone.signal,
      );
      // Fastify writes a reply's headers only when it sends the reply: taken over, the stream keeps those the hooks
      // set (RateLimit-*), as its own writeHead adds to what is on the response already.
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
      reply.hijack();
      const stream = serveSse(reply.raw, call, sse, request.log);
      open.add(stream);
      // A shutdown that began while this call opened ended the streams there were then, not this one.
      if (closing()) stream.end(SHUTTING_DOWN);
      // The credential was checked when the stream opened; it must hold for as long as the stream does.
      const credential = request.credential;
      const watch = setInterval(() => {
        const refusal = credential && credentialRefusal(credential, revocations);
        if (refusal) stream.end(refusal.message, refusal.code);
      }, CREDENTIAL_CHECK_MS);
      await stream.done;
      clearInterval(watch);
      open.delete(stream);
    },
  );
};
