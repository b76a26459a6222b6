import { randomBytes } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { BUCKETS, openKvBucket, withNats, type NatsHandle } from '../nats';

/** Per-instance Standard Webhooks signing secrets (`whsec_` + base64 of 32 random bytes). Never in an event or a log. */
export interface WebhookSecretStore {
  /** The instance's secret, created on first use; concurrent callers all get the same one. */
  getOrCreate(instanceId: string): Promise<string>;
  get(instanceId: string): Promise<string | null>;
}

export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** Secrets in the NATS KV bucket `webhook_secrets`: `create` is compare-and-set, so two replicas never mint two. */
export class KvWebhookSecretStore implements WebhookSecretStore {
  private constructor(
    private readonly nats: NatsHandle,
    private readonly kv: KV,
  ) {}

  static async open(nats: NatsHandle, bucket: string = BUCKETS.webhookSecrets): Promise<KvWebhookSecretStore> {
    const kv = await openKvBucket(nats, bucket);
    return new KvWebhookSecretStore(nats, kv);
  }

  async get(instanceId: string): Promise<string | null> {
    const entry = await withNats(this.nats, () => this.kv.get(instanceId));
    return entry && entry.operation === 'PUT' ? entry.string() : null;
  }

  async getOrCreate(instanceId: string): Promise<string> {
    const existing = await this.get(instanceId);
    if (existing) return existing;
    const secret = newWebhookSecret();
    const created = await withNats(this.nats, () =>
      this.kv.create(instanceId, secret).then(
        () => true,
        () => false,
      ),
    );
    if (created) return secret;
    const winner = await this.get(instanceId);
    if (!winner) throw new Error(`webhook secret for ${instanceId} could neither be created nor read`);
    return winner;
  }
}

/** The same contract in memory (one secret per instance, made on first use): for a single process and for tests. */
export class InMemoryWebhookSecretStore implements WebhookSecretStore {
  private readonly secrets = new Map<string, string>();

  async get(instanceId: string): Promise<string | null> {
    return this.secrets.get(instanceId) ?? null;
  }

  async getOrCreate(instanceId: string): Promise<string> {
    const secret = this.secrets.get(instanceId) ?? newWebhookSecret();
    this.secrets.set(instanceId, secret);
    return secret;
  }
}
