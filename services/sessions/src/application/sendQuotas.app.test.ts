import {
  ALL_MESSAGES_PATTERN,
  InMemoryEventStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  messageEvent,
  messageStream,
  Projection,
  StoreSpecification,
  type GivenCommit,
} from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { InstanceRegistry } from '../registry/instanceRegistry';
import { SendLedger } from '../registry/sendLedger';
import { MessagesService, type SendCommand, type SendQuotas } from './messagesService';

// The send quotas on the in-memory store: the real service, registry and ledger; a full queue or a spent daily cap
// refuses the send with a 429 that says which, and nothing is appended.

const ID = instanceIdFor('acme', 'create-1');
const today = () => new Date().toISOString();
const YESTERDAY = new Date(Date.now() - 86_400_000).toISOString();

const linkedInstance: GivenCommit = {
  stream: instanceStream(ID),
  events: [
    instanceEvent('InstanceCreated', today(), { instance_id: ID, account: 'acme' }),
    instanceEvent('InstanceLinked', today(), { number: '4915112345678' }),
  ],
};
const acceptedAt = (messageId: string, at: string): GivenCommit => ({
  stream: messageStream(ID, messageId),
  events: [messageEvent('MessageAccepted', at, { message_id: messageId, to: '4917612345678', type: 'text', text: 'hi', media_url: null, filename: null })],
});
const sent = (messageId: string): GivenCommit => ({
  stream: messageStream(ID, messageId),
  events: [messageEvent('MessageSent', today(), { message_id: messageId, to: '4917612345678' })],
});
/** What accepting `send` appends. */
const storedSend = (messageId: string) => ({
  stream: messageStream(ID, messageId),
  events: [{ type: 'MessageAccepted', data: { message_id: messageId, to: '4917612345678', type: 'text', text: 'hello', media_url: null, filename: null } }],
});
const send: SendCommand = {
  account: 'acme',
  instanceId: ID,
  to: '4917612345678',
  groupId: '',
  type: 'text',
  text: 'hello',
  mediaUrl: '',
  filename: '',
  idempotencyKey: '',
  quotedMessageId: '',
  location: null,
  vcard: '',
  reactionMessageId: '',
  emoji: '',
  voiceNote: false,
};

describe('send quotas (application, in-memory store)', () => {
  let store: InMemoryEventStore;
  let registry: InstanceRegistry;
  let ledger: SendLedger;
  let ledgerFeed: Projection;
  let given: ReturnType<typeof StoreSpecification.for>;
  const serviceWith = (quotas: SendQuotas) => new MessagesService(store, registry, async () => undefined, { ledger, quotas, folded: () => ledgerFeed.applied });
  /** Accepts once the ledger has seen what was given (in production it lags by milliseconds). */
  const accept = async (service: MessagesService) => {
    await ledgerFeed.catchUp(1_000);
    return service.accept(send);
  };

  beforeEach(() => {
    store = new InMemoryEventStore();
    registry = new InstanceRegistry(store, testLogger());
    registry.start();
    ledger = new SendLedger();
    ledgerFeed = new Projection(store, ALL_MESSAGES_PATTERN, (commit) => ledger.apply(commit), testLogger());
    ledgerFeed.start();
    given = StoreSpecification.for(store);
  });
  afterEach(async () => {
    await registry.stop();
    await ledgerFeed.stop();
  });

  it('refuses a send while the instance has queueMax sends waiting (429 send_queue_full)', async () => {
    await given(linkedInstance, acceptedAt('m_1', today()), acceptedAt('m_2', today()))
      .when(() => accept(serviceWith({ queueMax: 2, dailyCap: 0 })))
      .thenThrows({ kind: 'rate_limited', code: 'send_queue_full' });
  });

  it("answers a full queue whose instance also spent the day's cap with the cap and its wait to midnight, not retry in 1 s", async () => {
    const refused = await given(linkedInstance, acceptedAt('m_1', today()), acceptedAt('m_2', today()))
      .when(() => accept(serviceWith({ queueMax: 2, dailyCap: 2 })))
      .thenThrows({ kind: 'rate_limited', code: 'daily_send_cap_reached' });
    expect(refused.retryAfterS).toBeGreaterThan(1);
  });

  it('accepts again once a waiting send went out, and shows the use of each quota', async () => {
    const service = serviceWith({ queueMax: 2, dailyCap: 10 });
    await given(linkedInstance, acceptedAt('m_1', today()), acceptedAt('m_2', today()), sent('m_1'))
      .when(() => accept(service))
      .then((messageId) => ({ commits: [storedSend(messageId)] }));
    await ledgerFeed.catchUp(1_000);
    expect(service.sendUsage(ID)).toEqual({ queued: 2, queueMax: 2, today: 3, dailyCap: 10 });
  });

  it("refuses a send once the day's cap is spent (429 daily_send_cap_reached, retry at UTC midnight); yesterday's sends do not count", async () => {
    const refused = await given(
      linkedInstance,
      acceptedAt('m_0', YESTERDAY),
      sent('m_0'),
      acceptedAt('m_1', today()),
      sent('m_1'),
      acceptedAt('m_2', today()),
      sent('m_2'),
    )
      .when(() => accept(serviceWith({ queueMax: 0, dailyCap: 2 })))
      .thenThrows({ kind: 'rate_limited', code: 'daily_send_cap_reached' });
    const now = new Date();
    const untilMidnightS = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
    expect(refused.retryAfterS).toBeGreaterThanOrEqual(untilMidnightS - 5);
    expect(refused.retryAfterS).toBeLessThanOrEqual(Math.ceil(untilMidnightS));
    await given()
      .when(() => accept(serviceWith({ queueMax: 0, dailyCap: 3 })))
      .then((messageId) => ({ commits: [storedSend(messageId)] }));
  });

  it('counts the sends being accepted that the ledger does not show yet: a burst of 30 at once against a cap of 5, then a queue of 9', async () => {
    await store.append(linkedInstance.stream, linkedInstance.events, { expectedVersion: 0, commandId: 'link' });
    await registry.catchUp(1_000);
    // The second burst finds the first's 5 sends queued: 4 more fit.
    for (const { quotas, taken, refused } of [
      { quotas: { queueMax: 0, dailyCap: 5 }, taken: 5, refused: 'daily_send_cap_reached' },
      { quotas: { queueMax: 9, dailyCap: 0 }, taken: 4, refused: 'send_queue_full' },
    ]) {
      const service = serviceWith(quotas);
      await ledgerFeed.catchUp(1_000);
      const before = (await store.readPattern(ALL_MESSAGES_PATTERN, 0, 1_000)).commits.length;
      const results = await Promise.allSettled(Array.from({ length: 30 }, () => service.accept(send)));
      const refusals = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code: string }).code] : []));
      const stored = (await store.readPattern(ALL_MESSAGES_PATTERN, 0, 1_000)).commits.length - before;
      expect({ taken: results.length - refusals.length, stored, refused: new Set(refusals) }).toEqual({ taken, stored: taken, refused: new Set([refused]) });
      await ledgerFeed.catchUp(1_000);
      // The ledger has them all now; none is counted twice.
      expect(service.sendUsage(ID).queued).toBe(quotas.queueMax || taken);
    }
  });

  it('answers a repeat of an accepted send (same Idempotency-Key) its message id, though that send spent the quota', async () => {
    await store.append(linkedInstance.stream, linkedInstance.events, { expectedVersion: 0, commandId: 'link' });
    await registry.catchUp(1_000);
    for (const quotas of [
      { queueMax: 0, dailyCap: 1 },
      { queueMax: 1, dailyCap: 0 },
    ]) {
      const service = serviceWith(quotas);
      const keyed = { ...send, idempotencyKey: `order-${quotas.queueMax}` };
      await ledgerFeed.catchUp(1_000);
      if (quotas.queueMax) {
        // The first round's send is queued; let it go out so this round's quota is its own.
        for (const { stream } of ledger.queuedSends(ID)) {
          await store.append(stream, sent(stream.split('.').pop()!).events, { expectedVersion: 'any', commandId: `sent-${stream}` });
        }
        await ledgerFeed.catchUp(1_000);
      }
      const first = await service.accept(keyed);
      await ledgerFeed.catchUp(1_000);
      // Its answer was lost (a 503 service_timeout): the client repeats the very same request.
      await expect(service.accept(keyed)).resolves.toBe(first);
      // Any other send is refused by the spent quota.
      await expect(service.accept(send)).rejects.toMatchObject({ kind: 'rate_limited' });
    }
  });

  it('answers a repeat racing its first (both under way at once) the same message id, the first taking the last place', async () => {
    await store.append(linkedInstance.stream, linkedInstance.events, { expectedVersion: 0, commandId: 'link' });
    await registry.catchUp(1_000);
    const service = serviceWith({ queueMax: 0, dailyCap: 1 });
    const keyed = { ...send, idempotencyKey: 'raced' };
    const answers = await Promise.allSettled([service.accept(keyed), service.accept(keyed), service.accept(keyed)]);
    const ids = answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as { code: string }).code));
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toMatch(/^m_/);
  });
});
