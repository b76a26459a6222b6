import {
  createDeliveryClient,
  InMemoryEventStore,
  InMemoryWebhookSecretStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  messageEvent,
  messageStream,
  type Commit,
  type NewEvent,
} from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { sleep } from '../../../../test/harness/wait';
import { WebhookReceiver } from '../../../../test/harness/webhookReceiver';
import { deliveryStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { Attempter } from './attempter';
import { CircuitBreaker } from './circuitBreaker';
import { Router } from './router';

// An instance whose lane handed an attempt off (its endpoint hangs) moves to another replica, or its replica
// restarts, while the handed-over deliveries wait for the deliverer: the next event must not reach the receiver
// before them. Each replica is a Router of its own (no memory shared) on one in-memory store, delivering to a real
// HTTP receiver on 127.0.0.1. The sequencer's "arrived" flag is what the router is handed for a moved instance.

const ID = instanceIdFor('acme', 'router-slow-move');
const AT = '2026-11-23T10:00:00.000Z';
const TIMEOUT_MS = 1_500;

/** Counts reads of the instance's handover marker (the hot path must not make any). */
class CountingStore extends InMemoryEventStore {
  markerReads = 0;
  override version(stream: string): Promise<number> {
    if (stream.endsWith('.handover')) this.markerReads++;
    return super.version(stream);
  }
}

describe('Router: a handover survives the instance moving to another replica or a restart (application)', () => {
  const receiver = new WebhookReceiver();
  const client = createDeliveryClient({ timeoutMs: TIMEOUT_MS, allowPrivateNetworks: true });
  let store: CountingStore;
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
    store = new CountingStore();
    endpoints = new EndpointDirectory(store, testLogger());
    endpoints.start();
    secrets = new InMemoryWebhookSecretStore();
    path = `/move-${++n}`;
    await append(instanceStream(ID), instanceEvent('InstanceCreated', AT, { instance_id: ID, account: 'acme' }));
    await append(instanceStream(ID), instanceEvent('WebhookConfigured', AT, { url: receiver.url(path), enabled: true }));
    receiver.secret(path, await secrets.getOrCreate(ID));
  });
  afterEach(() => endpoints.stop());

  const append = (stream: string, ...events: NewEvent[]) => store.append(stream, events, { expectedVersion: 'any', commandId: `c-${Math.random()}` });
  /** A replica's router: nothing in memory shared with the others. */
  const replica = (): Router => {
    const breaker = new CircuitBreaker(5, 30_000);
    const attempter = new Attempter(secrets, client, breaker, { schedule: [0, 5_000, 30_000], random: () => 0.5 }, 'w1', () => new Date());
    return new Router(store, store, endpoints, attempter, breaker, testLogger(), { concurrency: 4, attemptTimeoutMs: TIMEOUT_MS, slowAfterMs: 200 });
  };
  const sent = async (count: number, from: number): Promise<Array<{ commit: Commit; id: string }>> => {
    const out: Array<{ commit: Commit; id: string }> = [];
    for (let i = from; i < from + count; i++) {
      const { version } = await append(messageStream(ID, `m${i}`), messageEvent('MessageSent', AT, { message_id: `m${i}`, to: '4915100000001' }));
      const [commit] = (await store.readPattern('>', version, 1)).commits as [Commit];
      out.push({ commit, id: `evt_${version}_0` });
    }
    return out;
  };
  /** Hands commits to a router as the sequencer does; `arrived` as the work item carries it (absent: an old sender). */
  const handOut = (router: Router, commits: Commit[], answers: string[], arrived?: boolean[]): void => {
    commits.forEach((commit, i) => {
      const delivery = {
        commit,
        deliveryCount: 1,
        ack: () => void answers.push(`ack ${commit.sequence}`),
        nak: () => void answers.push(`nak ${commit.sequence}`),
        inProgress: () => undefined,
      };
      if (arrived) router.handle(ID, delivery, arrived[i]);
      else router.handle(ID, delivery);
    });
  };
  const waitFor = async (ok: () => boolean, timeoutMs: number): Promise<void> => {
    for (const deadline = Date.now() + timeoutMs; !ok() && Date.now() < deadline;) await sleep(10);
  };
  const notBeforeOf = async (id: string): Promise<string | undefined> => {
    const [commit] = await store.readStream(deliveryStream(ID, id));
    return (commit?.events[0]?.data as { not_before?: string } | undefined)?.not_before;
  };
  /** m1 hangs on `first` (handed off), m2 is recorded behind it: both wait for the deliverer. */
  const slowOn = async (first: Router): Promise<Array<{ commit: Commit; id: string }>> => {
    receiver.script(path, 'hang');
    const before = receiver.on(path).length;
    const events = await sent(2, 1);
    const answers: string[] = [];
    handOut(
      first,
      events.map((e) => e.commit),
      answers,
      [true, false],
    );
    await waitFor(() => answers.length === 2, 4 * TIMEOUT_MS);
    expect(answers).toEqual(events.map((e) => `ack ${e.commit.sequence}`));
    expect(
      receiver
        .on(path)
        .slice(before)
        .map((r) => r.body.data.message_id),
    ).toEqual(['m1']);
    return events;
  };

  it.each([
    ['moved to another replica, or its replica restarted (the sequencer marks its first event there)', [true]],
    ['is forwarded by a sequencer of an earlier release (no mark: taken as arrived)', undefined],
  ])('records the next event behind the handed-over ones when the instance %s', async (_why, arrived) => {
    const a = replica();
    const [m1] = await slowOn(a);
    // The instance now goes to b (a joined replica, or a after a restart: a new process, no memory).
    const b = replica();
    const [m3] = await sent(1, 3);
    const answers: string[] = [];
    handOut(b, [m3!.commit], answers, arrived);
    await b.idle();
    expect(answers).toEqual([`ack ${m3!.commit.sequence}`]);
    // Not sent from b before m1 and m2 had their attempts from the deliverer: recorded behind them, as on a.
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m1']);
    expect(await notBeforeOf(m3!.id)).toBe(await notBeforeOf(m1!.id));
    await a.idle();
  });

  it('records behind a handover made elsewhere when the instance comes back to a replica that knew it before', async () => {
    const a = replica();
    const b = replica();
    // a knows the instance (its endpoint was fast then), then it moves to b, where its endpoint hangs.
    const [m0] = await sent(1, 0);
    const answers: string[] = [];
    handOut(a, [m0!.commit], answers, [true]);
    await a.idle();
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m0']);
    const [m1] = await slowOn(b);
    // Back on a: its memory of the instance is stale; the sequencer marks the first event there.
    const [m3] = await sent(1, 3);
    handOut(a, [m3!.commit], answers, [true]);
    await a.idle();
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m0', 'm1']);
    expect(await notBeforeOf(m3!.id)).toBe(await notBeforeOf(m1!.id));
    await b.idle();
  });

  it('reads no marker for an event that is not the first of its instance on the replica (the hot path)', async () => {
    const a = replica();
    const events = await sent(3, 1);
    const answers: string[] = [];
    handOut(
      a,
      events.map((e) => e.commit),
      answers,
      [true, false, false],
    );
    await a.idle();
    expect(receiver.on(path).map((r) => r.body.data.message_id)).toEqual(['m1', 'm2', 'm3']);
    expect(store.markerReads).toBe(1);
  });
});
