import { BUCKETS } from '@wagw/lib';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';

import { type SandboxConnectionRecord } from '../../services/sessions/src/connector/sandbox/ledger';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The drill's own view of NATS: who leads the EVENTS stream, who holds which lease, what the sandbox platform took
 * and which connections it saw. Read-only: it opens buckets, never creates one (creating would pick replicas the
 * services did not choose). It keeps to the URLs it was given (no cluster gossip: in Docker those are internal).
 */
export class NatsObserver {
  private readonly buckets = new Map<string, KV>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly kvm: Kvm,
    /** For probes that must not wait long: an unanswered one is asked again. */
    private readonly quickJsm: JetStreamManager,
  ) {}

  static async connect(url: string): Promise<NatsObserver> {
    const nc = await connect({
      servers: url.split(',').map((s) => s.trim()),
      name: 'cluster-drill',
      ignoreClusterUpdates: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      timeout: 5_000,
    });
    const jsm = await retried(() => jetstreamManager(nc, { timeout: 5_000 }), 'JetStream');
    return new NatsObserver(nc, jsm, new Kvm(nc), await jetstreamManager(nc, { timeout: 500, checkAPI: false }));
  }

  /** The server name of the EVENTS stream's leader (it changes after a kill; retried while an election runs). */
  async eventsLeader(): Promise<string> {
    return retried(async () => {
      const leader = (await this.jsm.streams.info('EVENTS')).cluster?.leader;
      if (!leader) throw new Error('EVENTS has no leader (yet)');
      return leader;
    }, 'the EVENTS leader');
  }

  /**
   * Whether the EVENTS stream's leader answers a message lookup: on a cluster only the stream leader does (the other
   * servers stay silent or say the cluster is not available), so this turns true once a new leader is elected.
   */
  async eventsLeaderAnswers(): Promise<boolean> {
    return this.quickJsm.streams.getMessage('EVENTS', { last_by_subj: 'events.drill-probe' }).then(
      () => true,
      () => false,
    );
  }

  /** The EVENTS stream's replicas as configured (the drill is meant for R3). */
  async eventsReplicas(): Promise<number> {
    return retried(async () => (await this.jsm.streams.info('EVENTS')).config.num_replicas, 'EVENTS info');
  }

  /** How many unexpired leases each owner holds in a lease bucket. */
  async leaseHolders(service: 'sessions' | 'webhooks'): Promise<Map<string, number>> {
    const kv = await this.bucket(service === 'sessions' ? BUCKETS.sessionLeases : BUCKETS.webhooksLeases);
    const holders = new Map<string, number>();
    for (const key of await this.keys(kv, '>')) {
      const entry = await kv.get(key);
      if (entry?.operation !== 'PUT') continue;
      const lease = entry.json<{ owner?: string; until?: number }>();
      if (typeof lease.owner === 'string' && (lease.until ?? 0) > Date.now()) holders.set(lease.owner, (holders.get(lease.owner) ?? 0) + 1);
    }
    return holders;
  }

  /** The sessions lease of an instance as stored now (for a failed drill's post-mortem), or null. */
  async sessionLease(instanceId: string): Promise<{ owner: string; until: number } | null> {
    const entry = await retried(async () => (await this.bucket(BUCKETS.sessionLeases)).get(instanceId), 'a sessions lease');
    if (entry?.operation !== 'PUT') return null;
    const lease = entry.json<{ owner?: unknown; until?: unknown }>();
    return typeof lease.owner === 'string' && typeof lease.until === 'number' ? { owner: lease.owner, until: lease.until } : null;
  }

  /** The message ids the sandbox platform took from the instance. */
  async takenIds(instanceId: string): Promise<Set<string>> {
    const kv = await this.bucket(BUCKETS.sandboxSent);
    return new Set((await this.keys(kv, `${instanceId}.*`)).map((key) => key.slice(instanceId.length + 1)));
  }

  /** When the platform took a message (ms since the epoch), or null. */
  async takenAt(instanceId: string, messageId: string): Promise<number | null> {
    const entry = await (await this.bucket(BUCKETS.sandboxSent)).get(`${instanceId}.${messageId}`);
    return entry?.operation === 'PUT' ? Date.parse(entry.string()) : null;
  }

  async connections(instanceId: string): Promise<SandboxConnectionRecord[]> {
    const kv = await this.bucket(BUCKETS.sandboxConnections);
    const records: SandboxConnectionRecord[] = [];
    for (const key of await this.keys(kv, `${instanceId}.*`)) {
      const entry = await kv.get(key);
      if (entry?.operation === 'PUT') records.push(entry.json<SandboxConnectionRecord>());
    }
    return records;
  }

  async close(): Promise<void> {
    await this.nc.close();
  }

  private async bucket(name: string): Promise<KV> {
    const known = this.buckets.get(name);
    if (known) return known;
    const kv = await retried(() => this.kvm.open(name), `bucket ${name}`);
    this.buckets.set(name, kv);
    return kv;
  }

  private async keys(kv: KV, filter: string): Promise<string[]> {
    return retried(async () => {
      const keys: string[] = [];
      for await (const key of await kv.keys(filter)) keys.push(key);
      return keys;
    }, 'KV keys');
  }
}

/** Retries a read while the cluster elects a leader (bounded: 40 tries, about 20-30 s). */
const retried = async <T>(read: () => Promise<T>, what: string): Promise<T> => {
  let last: unknown;
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      return await read();
    } catch (error) {
      last = error;
      await sleep(500);
    }
  }
  throw new Error(`could not read ${what}: ${String(last)}`);
};
