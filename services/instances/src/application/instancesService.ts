import {
  AggregateCache,
  assertInstanceId,
  assertWebhookUrl,
  handleCommand,
  instanceIdFor,
  instanceStream,
  invalidArgument,
  loadAggregate,
  newCommandId,
  parseIsoTime,
  stateAt,
  type EventStore,
  type WebhookSecretStore,
} from '@wagw/lib';
import { instanceDecider, instanceNotFound, type ExistingInstance, type InstanceCommand, type InstanceState } from '@wagw/lib';
import { parseFilters, readHistory, type HistoryFilters, type HistoryPage } from './historyQuery';
import type { InstanceDirectory } from './instanceDirectory';

export interface InstanceView {
  instance: ExistingInstance;
  version: number;
}

const LIST_CATCH_UP_MS = 2_000;

export interface InstancesServiceDeps {
  store: EventStore;
  secrets: WebhookSecretStore;
  directory: InstanceDirectory;
  /** Refuses a webhook URL the gateway must not call (the SSRF guard); resolves when it is acceptable. */
  checkWebhookUrl: (url: string) => Promise<void>;
  now?: () => Date;
}

/** The instances use cases: each validates, runs the aggregate's command handler or reads, and returns views. */
export class InstancesService {
  private readonly cache = new AggregateCache<InstanceState>();
  private readonly now: () => Date;

  constructor(private readonly deps: InstancesServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async create(account: string, commandId: string): Promise<InstanceView> {
    if (!commandId) throw invalidArgument('invalid_command_id', 'command_id is required');
    const instanceId = instanceIdFor(account, commandId);
    return this.run(instanceId, commandId, { type: 'CreateInstance', instanceId, account, now: this.timestamp() });
  }

  /** The instance now, or as it was at `at` (ISO 8601; its history folded up to then by the same evolve as today's state). */
  async get(account: string, instanceId: string, atTime = ''): Promise<InstanceView> {
    assertInstanceId(instanceId);
    const at = atTime ? parseIsoTime(atTime, 'at') : null;
    const stream = instanceStream(instanceId);
    const { state, version } = at
      ? stateAt(instanceDecider, await this.deps.store.readStream(stream), at)
      : await loadAggregate(this.deps.store, instanceDecider, stream, this.cache);
    if (!state.exists || state.account !== account) {
      // Another account's instance, or one created later than `at`, answers exactly like an unknown one.
      throw instanceNotFound();
    }
    return { instance: state, version };
  }

  async list(account: string): Promise<ExistingInstance[]> {
    return this.deps.directory.list(account, LIST_CATCH_UP_MS);
  }

  async setWebhook(account: string, instanceId: string, url: string, enabled: boolean, commandId: string): Promise<InstanceView & { signingSecret: string }> {
    assertInstanceId(instanceId);
    assertWebhookUrl(url);
    await this.deps.checkWebhookUrl(url);
    const view = await this.run(instanceId, commandId, { type: 'ConfigureWebhook', account, url, enabled, now: this.timestamp() });
    return { ...view, signingSecret: await this.deps.secrets.getOrCreate(instanceId) };
  }

  async reset(account: string, instanceId: string, commandId: string): Promise<InstanceView> {
    assertInstanceId(instanceId);
    return this.run(instanceId, commandId, { type: 'ResetInstance', account, now: this.timestamp() });
  }

  /** The instance's events (its own stream and its messages'), oldest first, filtered, a page at a time. */
  async history(account: string, instanceId: string, cursor: number, limit: number, filters: HistoryFilters = {}): Promise<HistoryPage> {
    await this.get(account, instanceId);
    return readHistory(this.deps.store, parseFilters(instanceId, filters), cursor, limit);
  }

  private async run(instanceId: string, commandId: string, command: InstanceCommand): Promise<InstanceView> {
    const result = await handleCommand(this.deps.store, instanceDecider, instanceStream(instanceId), command, {
      commandId: commandId || newCommandId(),
      cache: this.cache,
    });
    if (!result.state.exists) throw instanceNotFound();
    return { instance: result.state, version: result.version };
  }

  private timestamp(): string {
    return this.now().toISOString();
  }
}
