import {
  assertPublicUrl,
  COMMAND_MAX_ATTEMPTS,
  InMemoryEventStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  StoreSpecification,
  type AppendOptions,
  type AppendResult,
  type NewEvent,
} from '@wagw/lib';
import { instancesOn } from '../../../../test/harness/instancesService';
import { type InstanceDirectory } from './instanceDirectory';
import { type InstancesService } from './instancesService';

// Application tests: a command whose instance another replica keeps changing between its read and its append. The
// version conflicts are retried with fresh state; once the retries run out the client hears a retryable 503
// (`concurrent_update`), never the event store's internal 409 `version_conflict` that no route documents.

const NOW = '2026-11-22T10:00:00.000Z';
const ID = instanceIdFor('acme', 'create-1');
const created = instanceEvent('InstanceCreated', NOW, { instance_id: ID, account: 'acme' });
/** What the other replica writes: a webhook of its own, each time just before this replica's append. */
const theirs = instanceEvent('WebhookConfigured', NOW, { url: 'https://hooks.example/theirs', enabled: true });

/** An in-memory store where another writer appends to `raced` right before each of the next `races` appends to it. */
class RacedStore extends InMemoryEventStore {
  races = 0;
  raced = '';
  private writes = 0;

  override async append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    if (stream === this.raced && this.races > 0) {
      this.races--;
      await super.append(stream, [theirs], { expectedVersion: 'any', commandId: `other-replica-${++this.writes}` });
    }
    return super.append(stream, events, options);
  }
}

describe('a command that keeps losing the race for its instance (application, in-memory store)', () => {
  let store: RacedStore;
  let directory: InstanceDirectory;
  let service: InstancesService;

  beforeEach(() => {
    store = new RacedStore();
    ({ service, directory } = instancesOn(store, {
      checkWebhookUrl: (url) => assertPublicUrl(url, { allowPrivate: false, resolve: async () => ['93.184.216.34'] }),
      now: () => new Date(NOW),
    }));
  });

  afterEach(async () => {
    service.close();
    await directory.stop();
  });

  /** Given the instance, when `command` runs with `races` appends of the other replica before its own, then ... */
  const racing = <A>(races: number, command: () => Promise<A>) =>
    StoreSpecification.for(store)({ stream: instanceStream(ID), events: [created] }).when(() => {
      store.raced = instanceStream(ID);
      store.races = races;
      return command();
    });
  const theirCommits = (count: number) => Array.from({ length: count }, () => ({ stream: instanceStream(ID), events: [theirs] }));

  it.each([
    ['set_webhook', () => service.setWebhook('acme', ID, 'https://hooks.example/mine', true, 'hook-1')],
    ['reset_instance', () => service.reset('acme', ID, 'reset-1')],
  ])('%s: every retry conflicting answers 503 concurrent_update with a wait to retry after, and stores nothing of its own', async (_name, command) => {
    const error = await racing(COMMAND_MAX_ATTEMPTS, command).thenThrows({
      kind: 'unavailable',
      code: 'concurrent_update',
      commits: theirCommits(COMMAND_MAX_ATTEMPTS),
    });
    expect(error.message).toBe('The instance was changed concurrently by another request; retry');
    expect(error.retryAfterS).toBe(1);
  });

  it('stores the command on its last retry when one fewer conflict than the retries allow came first', async () => {
    const { commits } = await racing(COMMAND_MAX_ATTEMPTS - 1, () => service.reset('acme', ID, 'reset-1')).then((answer) => ({
      commits: [...theirCommits(COMMAND_MAX_ATTEMPTS - 1), { stream: instanceStream(ID), events: [instanceEvent('InstanceReset', NOW, {})] }],
      answer,
    }));
    expect(commits).toHaveLength(COMMAND_MAX_ATTEMPTS);
  });
});
