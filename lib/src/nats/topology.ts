/**
 * The map of everything this product names in NATS: JetStream streams, KV buckets, durable consumers and core
 * subjects, and who uses them. Every stream and bucket is created with `NATS_REPLICAS` replicas (`provision.ts`).
 * An aggregate's subject inside a stream (`<instance_id>.instance`, `<instance_id>.message.<message_id>`, ...) is
 * named by its events module (`lib/src/events`); `instanceIdOf` reads the instance back from any of them.
 */

/** JetStream streams: the event log of every domain event, and the webhook delivery records (the job queue). */
export const STREAMS = {
  /** Domain events of every instance and message; subjects `events.<aggregate stream>`. */
  events: { name: 'EVENTS', subjectPrefix: 'events' },
  /** Webhook deliveries (one aggregate per delivery); subjects `webhooks.<instance_id>.delivery.<id>`. */
  webhooks: { name: 'WEBHOOKS', subjectPrefix: 'webhooks' },
} as const;

/** KV buckets (each is a stream `KV_<bucket>`). */
export const BUCKETS = {
  /** instances writes, webhooks reads: each instance's Standard Webhooks signing secret. */
  webhookSecrets: 'webhook_secrets',
  /** sessions: which replica runs which instance (leases). */
  sessionLeases: 'session_leases',
  /** sessions: the lease of the one replica that fails the queued sends of instances no replica holds. */
  sessionsLeaders: 'sessions_leaders',
  /** webhooks: the sequencer's lease (one replica reads the event log). */
  webhooksLeases: 'webhooks_leases',
  /** sessions, Baileys connector: each instance's WhatsApp auth state (creds and Signal keys). */
  waAuth: 'wa_auth',
  /** sessions, Baileys connector: sent messages, for retries and receipts after a restart. */
  waSent: 'wa_sent',
  /** sessions, sandbox connector: the simulated platform's links, taken message ids, connections and receipts owed. */
  sandboxLinks: 'sandbox_platform_links',
  sandboxSent: 'sandbox_platform_sent',
  sandboxConnections: 'sandbox_platform_connections',
  sandboxReceipts: 'sandbox_platform_receipts',
  /** sessions: what each connector needs to act on a received message later (mark_read, media download). */
  inboundRefs: 'inbound_refs',
  /**
   * instances, sessions, webhooks: each instance's data key, which seals message content in the event log
   * (`lib/src/contentKeys`); erasure (`/v1/erase_instance_data`) purges it. Outside the log on purpose.
   */
  contentKeys: 'content_keys',
  /** gateway: revoked token ids (every replica watches it and refuses them). */
  revokedTokens: 'revoked_tokens',
} as const;

/** Object stores (values larger than a NATS message). */
export const OBJECT_STORES = {
  /** instances, sessions, webhooks: read-model checkpoints (`lib/src/nats/checkpointStore.ts`). */
  checkpoints: 'read_model_checkpoints',
} as const;

/** Durable consumers (shared by a service's replicas; their position survives restarts). */
export const DURABLES = {
  /** webhooks: every domain event, read by the sequencer replica. */
  webhooksRouter: 'webhooks-router',
  /** webhooks: delivery records due for a retry. */
  webhooksDeliverer: 'webhooks-deliverer',
  /** webhooks: replays asked for (GET /v1/replay_webhooks), worked one at a time per replica. */
  webhooksReplayer: 'webhooks-replayer',
} as const;

/** Core NATS subjects (request/reply and announcements between replicas; nothing stored). */
export const SUBJECTS = {
  /** A sessions replica's operations for the instances it holds (owner routing). */
  sessionsReplica: (replicaId: string): string => `sessions.replica.${replicaId}`,
  /** Webhooks replicas announce themselves here (heartbeats). */
  webhooksMembers: 'cluster.webhooks.members',
  /** Events the sequencer hands to one webhooks replica. */
  webhooksWork: (member: string): string => `cluster.webhooks.work.${member}`,
  /** Gateway replicas announce the requests they admitted per rate-limit key (`WindowCounter`). */
  gatewayRateCounts: 'cluster.gateway.ratelimit',
} as const;

/** The instance an aggregate's stream belongs to: every stream name starts with the instance id. */
export const instanceIdOf = (stream: string): string => {
  const dot = stream.indexOf('.');
  return dot < 0 ? stream : stream.slice(0, dot);
};
