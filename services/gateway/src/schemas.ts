import { Type, type TSchema } from '@sinclair/typebox';
import { INSTANCE_ID_PATTERN, INSTANCE_STATES, LIMITS, PAGE_LIMIT, WEBHOOK_EVENT_TYPE_NAMES } from '@wagw/lib';
import { errorResponse } from './responseDocs';

export const AccessToken = Type.Optional(Type.String({ description: 'Credential (JWT), instead of the Authorization: Bearer header' }));

/**
 * A `types` filter (history, events, replay_webhooks), read by lib's parseNameList: one rule, described once, with the
 * names it takes (the history's are the log's, `MessageReceived`; the others the webhook's, `message.received`).
 */
export const TypesFilter = (kind: 'event types' | 'webhook event types', names: readonly string[], example: string) =>
  Type.Optional(
    Type.String({
      maxLength: 1024,
      description: `Comma-separated ${kind}, of: ${names.join(', ')}. Absent or empty: every type. An unknown type, or only commas and blanks (\`,\`), answers 400 invalid_types`,
      examples: [example],
    }),
  );

export const InstanceId = Type.String({
  pattern: INSTANCE_ID_PATTERN,
  description: 'Instance identifier (20 upper-case hexadecimal characters)',
  examples: ['6F1C0A9B3D2E4F5A6B7C'],
});

export const InstanceQuery = Type.Object({ instance_id: InstanceId, access_token: AccessToken });

/** The seed's success envelope: `status` (200) and `message`, plus the operation's fields; `example`: a whole answer. */
export const envelope = <T extends Record<string, TSchema>>(fields: T, example?: Record<string, unknown>) =>
  Type.Object(
    {
      status: Type.Integer({ description: 'The HTTP status, 200', examples: [200] }),
      message: Type.String(),
      ...fields,
    },
    example ? { examples: [{ status: 200, ...example }] } : {},
  );

/** The Idempotency-Key header (checked by idempotencyKeyOf, and given twice by plugins/singleHeaders: 400 invalid_idempotency_key). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: 'A retry with the same key repeats nothing and answers the same result (1-255 visible ASCII)', examples: ['order-4711'] }),
  ),
});

export const EXAMPLE_ID = '6F1C0A9B3D2E4F5A6B7C';

/** An instance as status and list_instances show it. */
export const EXAMPLE_INSTANCE = {
  instance_id: EXAMPLE_ID,
  state: 'connected',
  created_at: '2026-11-23T10:00:00.000Z',
  state_since: '2026-11-23T10:02:13.000Z',
  webhook: { url: 'https://hooks.example.com/wa', enabled: true, events: ['message.received', 'message.failed'] },
  linked_number: '4915112345678',
  last_disconnect_reason: null,
  restricted: null,
  data_erased_at: null,
};

export const EXAMPLE_QUOTAS = {
  instances: { used: 3, max: 100 },
  queued_sends: { used: 0, max: 1000 },
  sends_today: { used: 42, max: null },
};

export const WebhookEventTypes = Type.Array(Type.Union(WEBHOOK_EVENT_TYPE_NAMES.map((t) => Type.Literal(t))), {
  description: 'The webhook event types delivered (every type unless set_webhook was given an events filter)',
});

export const WebhookView = Type.Union([Type.Object({ url: Type.String(), enabled: Type.Boolean(), events: WebhookEventTypes }), Type.Null()]);

export const InstanceView = {
  instance_id: InstanceId,
  state: Type.Union(
    INSTANCE_STATES.map((s) => Type.Literal(s)),
    { description: 'Lifecycle state' },
  ),
  created_at: Type.String({ format: 'date-time' }),
  state_since: Type.String({ format: 'date-time', description: 'When the instance entered its current state' }),
  webhook: WebhookView,
  linked_number: Type.Union([Type.String(), Type.Null()], { description: 'The linked phone number, when linked' }),
  last_disconnect_reason: Type.Union([Type.String(), Type.Null()]),
  restricted: Type.Union(
    [
      Type.Object({
        since: Type.String({ format: 'date-time' }),
        until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it ends, if WhatsApp said' }),
      }),
      Type.Null(),
    ],
    {
      description:
        "Set while WhatsApp restricts the account's sends (it answered a send with 463, `account_restricted`): sends wait, queued, until `until` (or, with no known end, an hour, SEND_RESTRICTED_PAUSE_MS, before one send probes). An `instance.restricted` webhook announces it. It is the linked account's: a logout or a link to another number ends it.",
    },
  ),
  data_erased_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: "When the instance's message content was last erased (erase_instance_data); null = never",
  }),
};

const Quota = (description: string) =>
  Type.Object(
    { used: Type.Integer({ minimum: 0 }), max: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'null: no limit' }) },
    { description },
  );

/** The quotas `status` shows, as they are now. */
export const QuotasView = Type.Object(
  {
    instances: Quota("The account's instances (create_instance answers 409 instance_quota_reached at max)"),
    queued_sends: Quota('Sends of this instance waiting to go out (send answers 429 send_queue_full at max)'),
    sends_today: Quota('Sends of this instance accepted today, UTC (send answers 429 daily_send_cap_reached at max)'),
  },
  { description: 'Quotas and their use, now (also with at)' },
);

export const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: LIMITS.url,
  description: 'Absolute http(s) URL, URL-encoded in the query; no user name or password, no port 0 (400 invalid_webhook_url otherwise)',
});

/** `limit` of every paged list. */
export const PageLimit = Type.Optional(
  Type.Integer({ minimum: 1, maximum: PAGE_LIMIT.max, default: PAGE_LIMIT.default, description: `Page size, 1-${PAGE_LIMIT.max}` }),
);

/** `next_cursor` of every paged list: pass it back as `cursor` for the next page; null on the last one. */
export const NextCursor = Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page; null on the last page' });

/**
 * Every error status a route may answer, each with the shared error body and its own description, example and headers
 * (responseDocs.ts). 405, 414 and 415 are added to every route they apply to by registerResponseDocs, not listed here.
 */
export const errorResponses = (...statuses: number[]): Record<number, ReturnType<typeof errorResponse>> =>
  Object.fromEntries(statuses.map((s) => [s, errorResponse(s)]));

export const COMMON_ERRORS = [400, 401, 403, 413, 429, 503] as const;

/** `status`: an instance and its quotas. */
export const StatusView = { ...InstanceView, quotas: QuotasView };
