import { performance } from 'node:perf_hooks';
import { ALL_INSTANCES_PATTERN, Projection, type Commit, type EventStore, type Logger } from '@wagw/lib';

/** What the webhooks service needs to know of an instance: its owner and its webhook settings. */
export interface Endpoint {
  account: string;
  url: string | null;
  enabled: boolean;
}

/** A read model of every instance's webhook settings, kept from the instance streams. */
export class EndpointDirectory {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly projection: Projection;
  private headQuery: { startedAt: number; result: Promise<number> } | null = null;

  constructor(
    private readonly store: EventStore,
    logger: Logger,
  ) {
    this.projection = new Projection(store, ALL_INSTANCES_PATTERN, (commit) => this.apply(commit), logger);
  }

  start(): void {
    this.projection.start();
  }

  stop(): Promise<void> {
    return this.projection.stop();
  }

  get(instanceId: string): Endpoint | undefined {
    return this.endpoints.get(instanceId);
  }

  /**
   * Makes sure every instance commit up to `sequence` is applied. A commit on another stream may have a higher
   * sequence than any instance commit, so when behind this asks the store for the newest instance commit; callers
   * that arrive while such a question is out share it (one query per round trip, not one per commit).
   */
  async reach(sequence: number, receivedAt: number, timeoutMs: number): Promise<boolean> {
    if (this.projection.applied >= sequence) return true;
    const head = await this.instanceHead(receivedAt);
    return this.projection.waitFor(Math.min(head, sequence), timeoutMs);
  }

  /** The newest instance commit, from a query sent no earlier than `notBefore` (so it saw everything before it). */
  private instanceHead(notBefore: number): Promise<number> {
    if (!this.headQuery || this.headQuery.startedAt < notBefore) {
      const query = { startedAt: performance.now(), result: this.store.version(ALL_INSTANCES_PATTERN) };
      this.headQuery = query;
      void query.result.finally(() => {
        if (this.headQuery === query) this.headQuery = null;
      }).catch(() => undefined);
    }
    return this.headQuery.result;
  }

  catchUp(timeoutMs: number): Promise<boolean> {
    return this.projection.catchUp(timeoutMs);
  }

  private apply(commit: Commit): void {
    const id = commit.stream.split('.')[0]!;
    for (const event of commit.events) {
      const current = this.endpoints.get(id);
      switch (event.type) {
        case 'InstanceCreated':
          this.endpoints.set(id, { account: String(event.data.account), url: null, enabled: false });
          break;
        case 'WebhookConfigured':
          if (current) this.endpoints.set(id, { ...current, url: String(event.data.url), enabled: event.data.enabled === true });
          break;
        case 'WebhookDisabled':
          if (current) this.endpoints.set(id, { ...current, enabled: false });
          break;
        default:
          break;
      }
    }
  }
}
