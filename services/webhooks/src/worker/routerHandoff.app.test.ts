import {
  createDeliveryClient,
  InMemoryEventStore,
  InMemoryWebhookSecretStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  messageEvent,
  messageStream,
  type AppendOptions,
  type AppendResult,
  type Commit,
  type NewEvent,
} from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { sleep } from '../../../../test/harness/wait';
import { WebhookReceiver, type Reply } from '../../../../test/harness/webhookReceiver';
import { deliveredStream, deliveryStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { Attempter } from './attempter';
import { CircuitBreaker } from './circuitBreaker';
import { Router, type RouterOptions } from './router';

// Application tests of a lane whose endpoint is slow: the real router, attempter and delivery client on one in-memory
// store whose appends can be made to fail, delivering to a real HTTP receiver on 127.0.0.1 (a `hang` reply accepts the
// request and never answers). Given an instance's events handed to the router in order, then which were acked or
// handed back (in what order), what the receiver got and what was recorded for the deliverer.

const ID = instanceIdFor('acme', 'router-slow');
const AT = '2026-11-23T10:00:00.000Z';
const TIMEOUT_MS = 2_000;

/** A store that refuses the next `failing` appends, as NATS does for a moment while it fails over. */
class FlakyStore extends InMemoryEventStore {
  failing = 0;
  override async append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    if (this.failing > 0) {
      this.failing--;
      throw new Error('nats: timeout');
    }
    return super.append(stream, events, options);
  }
}

describe('Router with a slow endpoint (application, in-memory store, real HTTP receiver)', () => {
  const receiver = new WebhookReceiver();
  const client = createDeliveryClient({ timeoutMs: TIMEOUT_MS, allowPrivateNetworks: true });
  let store: FlakyStore;
  let endpoints: EndpointDirectory;
  let secrets: InMemoryWebhookSecretStore;
  let path = '';
  let n = 0;

  beforeAll(() => receiver.start());
  afterAll(async () => {
    await client.close();
    await receiver.stop();
  });
  beforeEach(async () => {
    store = new FlakyStore();
    endpoints = new EndpointDirectory(store, testLogger());
    endpoints.start();
    secrets = new InMemoryWebhookSecretStore();
    path = `/slow-${++n}`;
    await append(instanceStream(ID), instanceEvent('InstanceCreated', AT, { instance_id: ID, account: 'acme' }));
    await append(instanceStream(ID), instanceEvent('WebhookConfigured', AT, { url: receiver.url(path), enabled: true }));
    receiver.secret(path, await secrets.getOrCreate(ID));
  });
  afterEach(() => endpoints.stop());

  const append = (stream: string, ...events: NewEvent[]) => store.append(stream, events, { expectedVersion: 'any', commandId: `c-${Math.random()}` });
  const routerWith = (options: Partial<RouterOptions>): Router => {
    const breaker = new CircuitBreaker(5, 30_000);
    const attempter = new Attempter(secrets, client, breaker, { schedule: [0, 5_000, 30_000], random: () => 0.5 }, 'w1', () => new Date());
    return new Router(store, store, endpoints, attempter, breaker, testLogger(), { concurrency: 16, attemptTimeoutMs: TIMEOUT_MS, ...options });
  };
  /** `count` sent messages of the instance, in order: their commits and webhook ids. */
  const sent = async (count: number, from = 1): Promise<Array<{ commit: Commit; id: string }>> => {
    const out: Array<{ commit: Commit; id: string }> = [];
    for (let i = from; i < from + count; i++) {
      const { version } = await append(messageStream(ID, `m${i}`), messageEvent('MessageSent', AT, { message_id: `m${i}`, to: '4915100000001' }));
      const [commit] = (await store.readPattern('>', version, 1)).commits as [Commit];
      out.push({ commit, id: `evt_${version}_0` });
    }
    return out;
  };
  /** Hands the commits to the router in order, as the sequencer does; what each answered lands in `answers`. */
  const handOut = (router: Router, commits: Commit[], answers: string[]): void => {
    for (const commit of commits) {
      router.handle(ID, {
        commit,
        deliveryCount: 1,
        ack: () => void answers.push(`ack ${commit.sequence}`),
        nak: () => void answers.push(`nak ${commit.sequence}`),
        inProgress: () => undefined,
      });
    }
  };
  const waitFor = async (ok: () => boolean, timeoutMs: number): Promise<void> => {
    for (const deadline = Date.now() + timeoutMs; !ok() && Date.now() < deadline;) await sleep(10);
  };
  const stored = async (stream: string) => (await store.readStream(stream)).flatMap((c) => c.events.map((e) => ({ type: e.type, data: e.data })));
  const hang = (): void => receiver.script(path, ...Array.from<Reply>({ length: 20 }).fill('hang'));

  it('hands an attempt that hangs to the deliverer after slowAfterMs, and records the next events behind it unsent', async () => {
    hang();
    const router = routerWith({ slowAfterMs: 200 });
    const events = await sent(3);
    const answers: string[] = [];
    const began = Date.now();
    handOut(
      router,
      events.map((e) => e.commit),
      answers,
    );
    await waitFor(() => answers.length === 3, 4 * TIMEOUT_MS);
    // Acked in order, well before the attempt's time-out: the lane held them for the 200 ms only.
    expect(answers).toEqual(events.map((e) => `ack ${e.commit.sequence}`));
    expect(Date.now() - began).toBeLessThan(TIMEOUT_MS / 2);
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m1']);
    // All wait for the deliverer until the hanging attempt has surely ended (its time-out and a margin).
    const [first] = await stored(deliveryStream(ID, events[0]!.id));
    const notBefore = (first?.data as { not_before?: string }).not_before;
    expect(Date.parse(notBefore ?? '') - began).toBeGreaterThanOrEqual(TIMEOUT_MS);
    for (const { id } of events) expect(await stored(deliveryStream(ID, id))).toMatchObject([{ type: 'DeliveryScheduled', data: { not_before: notBefore } }]);
    // The hanging attempt's outcome is added to its record when it times out.
    await router.idle();
    expect(await stored(deliveryStream(ID, events[0]!.id))).toMatchObject([
      { type: 'DeliveryScheduled' },
      { type: 'DeliveryAttempted', data: { attempt: 1, outcome: 'retry' } },
    ]);
    // An event after it still goes behind those waiting for the deliverer, not out before them from here.
    const [later] = await sent(1, 4);
    handOut(router, [later!.commit], answers);
    await router.idle();
    expect(receiver.on(path)).toHaveLength(1);
    expect(await stored(deliveryStream(ID, later!.id))).toMatchObject([{ type: 'DeliveryScheduled', data: { not_before: notBefore } }]);
  });

  it('hands nothing back for a full lane: the attempt ahead is handed off at once, the events behind it recorded in order', async () => {
    hang();
    const router = routerWith({ maxPerInstance: 3 });
    const events = await sent(6);
    const answers: string[] = [];
    handOut(
      router,
      events.map((e) => e.commit),
      answers,
    );
    await waitFor(() => answers.length === 6, 4 * TIMEOUT_MS);
    expect(answers).toEqual(events.map((e) => `ack ${e.commit.sequence}`));
    // The attempt ahead was handed off at once, maybe before its request reached the receiver: one request, no more.
    await waitFor(() => receiver.on(path).length > 0, TIMEOUT_MS);
    expect(receiver.on(path)).toHaveLength(1);
    for (const { id } of events) expect((await stored(deliveryStream(ID, id)))[0]).toMatchObject({ type: 'DeliveryScheduled' });
    await router.idle();
  });

  it('records an outcome NATS refused for a moment again in the lane: nothing handed back, posted once, in order', async () => {
    const router = routerWith({});
    const events = await sent(2);
    const answers: string[] = [];
    store.failing = 2;
    handOut(
      router,
      events.map((e) => e.commit),
      answers,
    );
    await router.idle();
    expect(answers).toEqual(events.map((e) => `ack ${e.commit.sequence}`));
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m1', 'm2']);
    for (const { id } of events) expect(await stored(deliveredStream(ID, id))).toMatchObject([{ type: 'DeliveryScheduled' }, { type: 'DeliveryAttempted' }]);
  });
});
