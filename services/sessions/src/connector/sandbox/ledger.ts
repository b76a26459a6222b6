import type { KV } from '@nats-io/kv';
import { withNats, type NatsHandle } from '@wagw/lib';

/**
 * What the simulated platform remembers beyond one process: which number each instance is linked to, and which
 * message ids it already took (it never sends one twice, as WhatsApp does with client-chosen ids). In memory for
 * one replica; in NATS KV when several sessions replicas share one sandbox (so a replica that takes an instance
 * over finds it linked, and a send repeated after a crash is recognised).
 */
export interface SandboxLedger {
  linkOf(instanceId: string): Promise<string | null>;
  setLink(instanceId: string, number: string | null): Promise<void>;
  /** Takes the message id: false when the platform took it before (the send is a repeat). */
  takeMessageId(instanceId: string, messageId: string): Promise<boolean>;
}

/** Message ids remembered per instance in memory (the oldest are forgotten beyond it). */
const IDS_PER_INSTANCE = 10_000;

export class MemorySandboxLedger implements SandboxLedger {
  private readonly links = new Map<string, string>();
  private readonly ids = new Map<string, Set<string>>();

  async linkOf(instanceId: string): Promise<string | null> {
    return this.links.get(instanceId) ?? null;
  }

  async setLink(instanceId: string, number: string | null): Promise<void> {
    if (number === null) this.links.delete(instanceId);
    else this.links.set(instanceId, number);
  }

  async takeMessageId(instanceId: string, messageId: string): Promise<boolean> {
    const ids = this.ids.get(instanceId) ?? new Set<string>();
    this.ids.set(instanceId, ids);
    if (ids.has(messageId)) return false;
    ids.add(messageId);
    if (ids.size > IDS_PER_INSTANCE) ids.delete(ids.values().next().value as string);
    return true;
  }
}

export const SANDBOX_BUCKET = 'sandbox_platform';

/**
 * The ledger in a NATS KV bucket: `link.<instance>` = number, `sent.<instance>.<message>` = when it was taken
 * (a `create`, so of two replicas sending the same id only one wins). Sent ids expire after `sentTtlMs`.
 */
export class KvSandboxLedger implements SandboxLedger {
  private constructor(
    private readonly nats: NatsHandle,
    private readonly links: KV,
    private readonly sent: KV,
  ) {}

  static async open(nats: NatsHandle, sentTtlMs = 7 * 24 * 3_600_000): Promise<KvSandboxLedger> {
    const links = await withNats(nats, () => nats.kvm.create(`${SANDBOX_BUCKET}_links`, { history: 1 }));
    const sent = await withNats(nats, () => nats.kvm.create(`${SANDBOX_BUCKET}_sent`, { history: 1, ttl: sentTtlMs }));
    return new KvSandboxLedger(nats, links, sent);
  }

  async linkOf(instanceId: string): Promise<string | null> {
    const entry = await withNats(this.nats, () => this.links.get(instanceId));
    return entry?.operation === 'PUT' ? entry.string() : null;
  }

  async setLink(instanceId: string, number: string | null): Promise<void> {
    await withNats(this.nats, async () => {
      if (number === null) await this.links.delete(instanceId);
      else await this.links.put(instanceId, number);
    });
  }

  async takeMessageId(instanceId: string, messageId: string): Promise<boolean> {
    const key = `${instanceId}.${messageId}`;
    return withNats(this.nats, () => this.sent.create(key, new Date().toISOString()).then(() => true, async (error: unknown) => {
      if ((await this.sent.get(key))?.operation === 'PUT') return false;
      throw error;
    }));
  }

  /** Every message id the platform took from the instance (for tests and audits across replicas). */
  async takenIds(instanceId: string): Promise<string[]> {
    const keys = await withNats(this.nats, () => this.sent.keys(`${instanceId}.*`));
    const ids: string[] = [];
    for await (const key of keys) ids.push(key.slice(instanceId.length + 1));
    return ids;
  }
}
