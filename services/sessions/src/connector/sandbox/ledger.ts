import { hostname } from 'node:os';
import type { KV } from '@nats-io/kv';
import { BUCKETS, openKvBucket, withNats, type NatsHandle } from '@wagw/lib';
import { KvOwedReceipts, type OwedReceipts } from './owedReceipts';

/**
 * What the simulated platform remembers beyond one process: which number each instance is linked to, which
 * message ids it already took (it never sends one twice, as WhatsApp does with client-chosen ids), and the receipts
 * it owes. In memory for one replica; in NATS KV when several sessions replicas share one sandbox (so a replica that
 * takes an instance over finds it linked, a send repeated after a crash is recognised, and the receipts of a send
 * taken by a replica that crashed still come).
 */
export interface SandboxLedger {
  linkOf(instanceId: string): Promise<string | null>;
  setLink(instanceId: string, number: string | null): Promise<void>;
  /** Takes the message id: false when the platform took it before (the send is a repeat). */
  takeMessageId(instanceId: string, messageId: string): Promise<boolean>;
  /**
   * The platform's own record of connections (optional): one went online, one ended. Only for audits, as the
   * cluster drill's "never two live connections for one instance"; best effort, never delays a connection.
   */
  connectionOnline?(instanceId: string, connectionId: string, at: number): void;
  connectionEnded?(instanceId: string, connectionId: string, at: number): void;
  /** The receipts owed, when they must outlive the process; absent, the platform's own queue (memory) holds them. */
  readonly receipts?: OwedReceipts;
}

/** One connection as the platform saw it: who held it, when it went online, when it ended (absent: never seen ending). */
export interface SandboxConnectionRecord {
  holder: string;
  online_at: number;
  ended_at?: number;
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

/** A connection record that cannot be written (NATS unavailable) is retried this often, this many times. */
const JOURNAL_RETRY_MS = 500;
const JOURNAL_ATTEMPTS = 60;

/**
 * The ledger in a NATS KV bucket: `link.<instance>` = number, `sent.<instance>.<message>` = when it was taken
 * (a `create`, so of two replicas sending the same id only one wins). Sent ids expire after `sentTtlMs`.
 */
export class KvSandboxLedger implements SandboxLedger {
  private constructor(
    private readonly nats: NatsHandle,
    private readonly links: KV,
    private readonly sent: KV,
    private readonly connections: KV,
    private readonly holder: string,
    readonly receipts: OwedReceipts,
  ) {}

  /**
   * `holder` names this process in the connection records; by default the sessions replica's id (SESSIONS_REPLICA_ID,
   * read here because the cluster drill matches it with the replica it killed), else host and pid.
   */
  static async open(
    nats: NatsHandle,
    sentTtlMs = 7 * 24 * 3_600_000,
    holder = process.env.SESSIONS_REPLICA_ID ?? `${hostname()}-${process.pid}`,
  ): Promise<KvSandboxLedger> {
    const links = await openKvBucket(nats, BUCKETS.sandboxLinks);
    const sent = await openKvBucket(nats, BUCKETS.sandboxSent, { ttlMs: sentTtlMs });
    const connections = await openKvBucket(nats, BUCKETS.sandboxConnections, { ttlMs: sentTtlMs });
    const receipts = new KvOwedReceipts(nats, await openKvBucket(nats, BUCKETS.sandboxReceipts, { ttlMs: sentTtlMs }));
    return new KvSandboxLedger(nats, links, sent, connections, holder, receipts);
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
    return withNats(this.nats, () =>
      this.sent.create(key, new Date().toISOString()).then(
        () => true,
        async (error: unknown) => {
          if ((await this.sent.get(key))?.operation === 'PUT') return false;
          throw error;
        },
      ),
    );
  }

  /** Every message id the platform took from the instance (for tests and audits across replicas). */
  async takenIds(instanceId: string): Promise<string[]> {
    const keys = await withNats(this.nats, () => this.sent.keys(`${instanceId}.*`));
    const ids: string[] = [];
    for await (const key of keys) ids.push(key.slice(instanceId.length + 1));
    return ids;
  }

  private readonly journal = new Map<string, { record: SandboxConnectionRecord; writing: Promise<void> }>();

  connectionOnline(instanceId: string, connectionId: string, at: number): void {
    this.record(`${instanceId}.${connectionId}`, (r) => r ?? { holder: this.holder, online_at: at });
  }

  connectionEnded(instanceId: string, connectionId: string, at: number): void {
    this.record(`${instanceId}.${connectionId}`, (r) => ({ ...(r ?? { holder: this.holder, online_at: at }), ended_at: at }));
  }

  /** Every connection of the instance the platform recorded. */
  async connectionsOf(instanceId: string): Promise<Array<SandboxConnectionRecord & { id: string }>> {
    const keys = await withNats(this.nats, () => this.connections.keys(`${instanceId}.*`));
    const records: Array<SandboxConnectionRecord & { id: string }> = [];
    for await (const key of keys) {
      const entry = await withNats(this.nats, () => this.connections.get(key));
      if (entry?.operation === 'PUT') records.push({ id: key.slice(instanceId.length + 1), ...entry.json<SandboxConnectionRecord>() });
    }
    return records;
  }

  /**
   * Writes a connection's record, one write after the other per connection (an end never lands before its start),
   * retried while NATS is unavailable (the drill kills NATS nodes), in the background.
   */
  private record(key: string, change: (record: SandboxConnectionRecord | undefined) => SandboxConnectionRecord): void {
    const previous = this.journal.get(key);
    const record = change(previous?.record);
    const write = async (): Promise<void> => {
      for (let attempt = 1; attempt <= JOURNAL_ATTEMPTS; attempt++) {
        try {
          await withNats(this.nats, () => this.connections.put(key, JSON.stringify(record)));
          return;
        } catch {
          await new Promise((r) => setTimeout(r, JOURNAL_RETRY_MS).unref());
        }
      }
    };
    const writing = (previous?.writing ?? Promise.resolve()).then(write);
    const entry = { record, writing };
    this.journal.set(key, entry);
    // Forgotten once written (an ended connection gets no further change).
    void writing.then(() => {
      if (record.ended_at !== undefined && this.journal.get(key) === entry) this.journal.delete(key);
    });
  }
}
