import {
  ALL_INSTANCES_PATTERN,
  assertInstanceId,
  instanceIdOf,
  notFound,
  instanceStream,
  Projection,
  type Commit,
  type EventStore,
  type Logger,
} from '@wagw/lib';

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

  constructor(store: EventStore, logger: Logger) {
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

  /** Makes sure the instance's settings include every commit of its stream up to `sequence`. */
  reach(instanceId: string, sequence: number, timeoutMs: number): Promise<boolean> {
    return this.projection.reachStream(instanceStream(instanceId), timeoutMs, sequence);
  }

  /** Answers 404 for an unknown instance and for another account's (the same answer, so ids cannot be probed). */
  async assertOwner(account: string, instanceId: string): Promise<void> {
    assertInstanceId(instanceId);
    await this.reach(instanceId, Number.MAX_SAFE_INTEGER, 2_000);
    if (this.get(instanceId)?.account !== account) throw notFound('instance_not_found', 'Instance not found');
  }

  catchUp(timeoutMs: number): Promise<boolean> {
    return this.projection.catchUp(timeoutMs);
  }

  private apply(commit: Commit): void {
    const id = instanceIdOf(commit.stream);
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
