import {
  AggregateCache,
  assertInstanceId,
  assertWebhookUrl,
  conflict,
  handleCommand,
  instanceIdFor,
  instanceStream,
  invalidArgument,
  loadAggregate,
  newCommandId,
  PAGE_LIMIT,
  pageAfter,
  parsePastTime,
  parseWebhookEventFilter,
  type Page,
  stateAt,
  type ContentKeys,
  type EventStore,
  type WebhookSecretStore,
  unavailable,
} from '@wagw/lib';
import { instanceDecider, instanceNotFound, type ExistingInstance, type InstanceCommand, type InstanceState } from '@wagw/lib';
import { MAX_HISTORY_PAGE, parseFilters, scanHistory, type HistoryFilters, type HistoryPage } from './historyQuery';
import { erasedSince, erasuresSoFar } from './erasureLog';
import { byCreation, type InstanceDirectory } from './instanceDirectory';
import { OpenScans } from './openScans';
import { PendingCreates } from './pendingCreates';

export interface InstanceView {
  instance: ExistingInstance;
  version: number;
}

const LIST_CATCH_UP_MS = 2_000;
/** New scans one export starts at most: each follows a key change (two per erasure with content since), so many mean erasures in a loop. */
const MAX_EXPORT_READS = 100;

export interface InstancesServiceDeps {
  store: EventStore;
  secrets: WebhookSecretStore;
  directory: InstanceDirectory;
  /** The data keys that seal message content in `store` (erasure destroys one). */
  keys: ContentKeys;
  /** Refuses a webhook URL the gateway must not call (the SSRF guard); resolves when it is acceptable. */
  checkWebhookUrl: (url: string) => Promise<void>;
  /** Instances an account may create; 0 = no limit. */
  instanceQuota?: number;
  now?: () => Date;
}

/** The instances use cases: each validates, runs the aggregate's command handler or reads, and returns views. */
export class InstancesService {
  private readonly cache = new AggregateCache<InstanceState>();
  private readonly scans = new OpenScans();
  private readonly pending: PendingCreates;
  private readonly now: () => Date;

  constructor(private readonly deps: InstancesServiceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.pending = new PendingCreates((instanceId) => deps.directory.has(instanceId));
  }

  async create(account: string, commandId: string): Promise<InstanceView> {
    if (!commandId) throw invalidArgument('invalid_command_id', 'command_id is required');
    const instanceId = instanceIdFor(account, commandId);
    const known = this.deps.directory.has(instanceId);
    const release = this.reserveInstance(account, instanceId, known);
    try {
      // Unknown to the directory: almost always a new instance, appended without reading its (empty) stream first.
      return await this.run(instanceId, commandId, { type: 'CreateInstance', instanceId, account, now: this.timestamp() }, !known);
    } catch (error) {
      release();
      throw error;
    }
  }

  /** The account's instance count and quota (0 = none), as `status` shows them (creates under way here included). */
  instanceUsage(account: string): { used: number; max: number } {
    return { used: this.deps.directory.countOf(account) + this.pending.count(account), max: this.deps.instanceQuota ?? 0 };
  }

  /**
   * Refuses a new instance over the account's quota (a retried create of an existing or pending one passes), else
   * counts it until the directory shows it (`PendingCreates`). Checked against the read model without waiting for it,
   * to keep create fast: creates racing on several replicas within the model's lag (milliseconds) may each pass.
   */
  private reserveInstance(account: string, instanceId: string, known: boolean): () => void {
    if (known || this.pending.has(account, instanceId)) return () => undefined;
    const { used, max } = this.instanceUsage(account);
    if (max > 0 && used >= max) {
      throw conflict('instance_quota_reached', `The account has ${used} of its ${max} instances; reset and reuse one, or ask for a higher quota`);
    }
    return this.pending.add(account, instanceId);
  }

  /** The instance now, or as it was at `at` (ISO 8601, not in the future; its history folded up to then by the same evolve as today's state). */
  async get(account: string, instanceId: string, atTime = ''): Promise<InstanceView> {
    assertInstanceId(instanceId);
    const at = atTime ? parsePastTime(atTime, 'at', this.now()) : null;
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

  /** The account's instances, oldest first, a page at a time (`cursor`: the last instance id of the previous page). */
  async list(account: string, cursor = '', limit: number = PAGE_LIMIT.default): Promise<Page<ExistingInstance>> {
    const instances = await this.deps.directory.list(account, LIST_CATCH_UP_MS);
    return pageAfter({
      items: instances,
      compare: byCreation,
      cursorOf: (i) => i.instanceId,
      find: (id) => instances.find((i) => i.instanceId === id),
      cursor,
      limit,
    });
  }

  /** `eventFilter`: the webhook event types to deliver (empty = all). */
  async setWebhook(
    account: string,
    instanceId: string,
    url: string,
    enabled: boolean,
    commandId: string,
    eventFilter: readonly string[] = [],
  ): Promise<InstanceView & { signingSecret: string }> {
    assertInstanceId(instanceId);
    assertWebhookUrl(url);
    const events = parseWebhookEventFilter(eventFilter);
    await this.deps.checkWebhookUrl(url);
    const view = await this.run(instanceId, commandId, { type: 'ConfigureWebhook', account, url, enabled, events, now: this.timestamp() });
    return { ...view, signingSecret: await this.deps.secrets.getOrCreate(instanceId) };
  }

  async reset(account: string, instanceId: string, commandId: string): Promise<InstanceView> {
    assertInstanceId(instanceId);
    return this.run(instanceId, commandId, { type: 'ResetInstance', account, now: this.timestamp() });
  }

  /**
   * Erasure: destroys the instance's data key, so the content of its messages in the log reads as erased from now on
   * (no event is rewritten), then records InstanceDataErased. Ownership is checked before anything is destroyed.
   * A retry under the Idempotency-Key of an erasure already recorded answers the instance as it is and destroys
   * nothing (content received since is not that erasure's to destroy). Another erasure with no content sealed since
   * the last one erases nothing more: under an Idempotency-Key it records InstanceDataAlreadyErased (no webhook, no new
   * `data_erased_at`) so that its retry is recognised too, after content arrived in between; without one, nothing. Content destroyed is always recorded: by this erasure, when an erasure that
   * stopped before recording left its content erased (see erasedSince), or anew when the store dropped the record as
   * the duplicate of a retry that raced this one.
   */
  async eraseData(account: string, instanceId: string, commandId: string): Promise<InstanceView> {
    const view = await this.get(account, instanceId);
    const id = this.commandIdOf(instanceId, 'EraseInstanceData', commandId);
    const before = await erasuresSoFar(this.deps.store, instanceId, id);
    if (before.recorded) return view;
    const destroyed = await this.deps.keys.destroy(instanceId);
    const unrecorded = !destroyed && before.lastSequence > 0 && (await erasedSince(this.deps.store, instanceId, before.lastSequence));
    const erase = (): InstanceCommand => ({
      type: 'EraseInstanceData',
      account,
      keyDestroyed: destroyed || unrecorded,
      keyed: commandId !== '',
      now: this.timestamp(),
    });
    const { recorded, ...result } = await this.record(instanceId, id, erase());
    return destroyed && !recorded ? this.run(instanceId, '', erase()) : result;
  }

  /**
   * One page of the history; the scan behind it stays open a moment for the next page (OpenScans). A paused scan
   * holds content it opened before the pause (the next page's first commit), so it is kept under the instance's key
   * generation: after an erasure (here, or seen through the keys' watch from another replica) the next page is read
   * anew and shows the content erased, like any read started then; the stale scan closes unused.
   */
  async history(account: string, instanceId: string, cursor: number, limit: number, filters: HistoryFilters = {}): Promise<HistoryPage> {
    await this.assertOwner(account, instanceId);
    const parsed = parseFilters(instanceId, filters);
    const pageSize = Math.min(Math.max(limit, 1), MAX_HISTORY_PAGE);
    // Taken before the scan reads anything: a key change while the page is read also leaves the scan unused.
    const keys = this.deps.keys.generation(instanceId);
    const keyAt = (at: number): string => JSON.stringify([parsed.pattern, filters.types, filters.since, filters.until, pageSize, at, keys]);
    const scan = this.scans.take(keyAt(cursor)) ?? scanHistory(this.deps.store, parsed, cursor, pageSize);
    const page = await scan.next();
    if (page.done) throw new Error('a history scan yields at least one page');
    if (page.value.nextSequence === null) await scan.return(undefined);
    else this.scans.keep(keyAt(page.value.nextSequence), scan);
    return page.value;
  }

  /** Closes the history scans kept open between pages. */
  close(): void {
    this.scans.closeAll();
  }

  /**
   * The whole history from `cursor` on, in pages of up to MAX_HISTORY_PAGE events and MAX_PAGE_BYTES, as one read.
   * The scan pauses while the caller writes a page, holding the next page's first commit already opened: a page
   * finished after the instance's key changed (an erasure) is read again from its start by a new scan, so content
   * erased while the export waited is not handed out.
   */
  async *exportHistory(account: string, instanceId: string, cursor: number, filters: HistoryFilters = {}): AsyncGenerator<HistoryPage> {
    await this.assertOwner(account, instanceId);
    const parsed = parseFilters(instanceId, filters);
    let from = cursor;
    for (let reads = 0; reads < MAX_EXPORT_READS; reads++) {
      const keys = this.deps.keys.generation(instanceId);
      for await (const page of scanHistory(this.deps.store, parsed, from, MAX_HISTORY_PAGE)) {
        if (this.deps.keys.generation(instanceId) !== keys) break;
        yield page;
        if (page.nextSequence === null) return;
        from = page.nextSequence;
      }
    }
    throw unavailable('history_changing', `the instance's content keys kept changing during the export; resume with cursor=${from}`);
  }

  /**
   * 404 unless the instance is the account's, from its first event (InstanceCreated names the account): a history
   * read folds nothing (the first page of a 100,000-event instance took over 5 s to fold its state on a busy machine).
   */
  private async assertOwner(account: string, instanceId: string): Promise<void> {
    assertInstanceId(instanceId);
    const first = (await this.deps.store.readPattern(instanceStream(instanceId), 1, 1)).commits[0]?.events[0];
    if (first?.type !== 'InstanceCreated' || first.data.account !== account) throw instanceNotFound();
  }

  /** Runs `command` under the client's Idempotency-Key ('' = none). */
  private async run(instanceId: string, idempotencyKey: string, command: InstanceCommand, expectNew = false): Promise<InstanceView> {
    const { instance, version } = await this.record(instanceId, this.commandIdOf(instanceId, command.type, idempotencyKey), command, expectNew);
    return { instance, version };
  }

  /** `recorded`: the command appended events (false: it decided none, or the store dropped them as a duplicate). */
  private async record(instanceId: string, commandId: string, command: InstanceCommand, expectNew = false): Promise<InstanceView & { recorded: boolean }> {
    const result = await handleCommand(this.deps.store, instanceDecider, instanceStream(instanceId), command, { commandId, cache: this.cache, expectNew });
    if (!result.state.exists) throw instanceNotFound();
    return { instance: result.state, version: result.version, recorded: result.events.length > 0 };
  }

  /**
   * A client's Idempotency-Key names one command of one instance: JetStream dedupes message ids over the whole
   * stream, so a bare key would make another account's or operation's command with the same key a silent no-op.
   */
  private commandIdOf(instanceId: string, type: InstanceCommand['type'], idempotencyKey: string): string {
    return idempotencyKey ? `${instanceId}.${type}.${idempotencyKey}` : newCommandId();
  }

  private timestamp(): string {
    return this.now().toISOString();
  }
}
