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
};

describe('send quotas (application, in-memory store)', () => {
  let store: InMemoryEventStore;
  let registry: InstanceRegistry;
  let ledger: SendLedger;
  let ledgerFeed: Projection;
  let given: ReturnType<typeof StoreSpecification.for>;
  const serviceWith = (quotas: SendQuotas) => new MessagesService(store, registry, async () => undefined, { ledger, quotas });
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

  it('accepts again once a waiting send went out, and shows the use of each quota', async () => {
    const service = serviceWith({ queueMax: 2, dailyCap: 10 });
    await given(linkedInstance, acceptedAt('m_1', today()), acceptedAt('m_2', today()), sent('m_1'))
      .when(() => accept(service))
      .then((messageId) => ({ commits: [storedSend(messageId)] }));
    await ledgerFeed.catchUp(1_000);
    expect(service.sendUsage(ID)).toEqual({ queued: 2, queueMax: 2, today: 3, dailyCap: 10 });
  });

  it("refuses a send once the day's cap is spent (429 daily_send_cap_reached); yesterday's sends do not count", async () => {
    await given(linkedInstance, acceptedAt('m_0', YESTERDAY), sent('m_0'), acceptedAt('m_1', today()), sent('m_1'), acceptedAt('m_2', today()), sent('m_2'))
      .when(() => accept(serviceWith({ queueMax: 0, dailyCap: 2 })))
      .thenThrows({ kind: 'rate_limited', code: 'daily_send_cap_reached' });
    await given()
      .when(() => accept(serviceWith({ queueMax: 0, dailyCap: 3 })))
      .then((messageId) => ({ commits: [storedSend(messageId)] }));
  });
});
