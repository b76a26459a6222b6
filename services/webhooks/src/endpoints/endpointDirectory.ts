import { ALL_INSTANCES_PATTERN, instanceIdOf, instanceStream, Projection, type Commit, type EventStore, type Logger } from '@wagw/lib';

/** What the webhooks service needs to know of an instance: its owner and its webhook settings. */
export interface Endpoint {
  account: string;
  url: string | null;
  enabled: boolean;
  /** The webhook event types it takes; empty = all. */
  events: readonly string[];
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

  catchUp(timeoutMs: number): Promise<boolean> {
    return this.projection.catchUp(timeoutMs);
  }

  private apply(commit: Commit): void {
    const id = instanceIdOf(commit.stream);
    for (const event of commit.events) {
      const current = this.endpoints.get(id);
      switch (event.type) {
        case 'InstanceCreated':
          this.endpoints.set(id, { account: String(event.data.account), url: null, enabled: false, events: [] });
          break;
        case 'WebhookConfigured':
          if (current) {
            const { url, enabled, events } = event.data;
            this.endpoints.set(id, { ...current, url: String(url), enabled: enabled === true, events: Array.isArray(events) ? events.map(String) : [] });
          }
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
