import {
  connectNats,
  createDeliveryClient,
  InMemoryWebhookSecretStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  JetStreamEventStore,
  messageEvent,
  messageStream,
  STREAMS,
  type Commit,
  type NatsHandle,
  type NewEvent,
} from '@wagw/lib';
import { startTestNats, type TestNats } from '../../../../test/harness/natsServer';
import { testLogger } from '../../../../test/harness/logger';
import { sleep } from '../../../../test/harness/wait';
import { WebhookReceiver } from '../../../../test/harness/webhookReceiver';
import { deliveryStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { Attempter } from './attempter';
import { CircuitBreaker } from './circuitBreaker';
import { Router } from './router';

const TIMEOUT_MS = 1_500;

// The handover marker on JetStream: a replica's router hands an instance's hanging attempt off, then the replica
// restarts (a new Router, nothing in memory) and the instance's next event arrives there. It must be recorded behind
// the handed-over one (read from the WEBHOOKS stream), not sent. Real nats-server and HTTP receiver on 127.0.0.1.
describe('Router on JetStream: a handover survives a restart of the replica', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  let store: JetStreamEventStore;
  const receiver = new WebhookReceiver();
  const client = createDeliveryClient({ timeoutMs: TIMEOUT_MS, allowPrivateNetworks: true });
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'handoff-move-int', logger: testLogger() });
    // One store for both logs here: the marker's stream lives beside the delivery records, as on WEBHOOKS.
    store = await JetStreamEventStore.open(handle, { streamName: STREAMS.webhooks.name, subjectPrefix: STREAMS.webhooks.subjectPrefix, logger: testLogger() });
    await receiver.start();
  });
  afterAll(async () => {
    await client.close();
    await receiver.stop();
    await handle.close();
    await nats.dispose();
  });

  it('records the next event behind the handed-over one after a restart', async () => {
    const id = instanceIdFor('acme', 'handoff-restart');
    const append = (stream: string, ...events: NewEvent[]) => store.append(stream, events, { expectedVersion: 'any', commandId: `c-${Math.random()}` });
    const at = new Date().toISOString();
    await append(instanceStream(id), instanceEvent('InstanceCreated', at, { instance_id: id, account: 'acme' }));
    await append(instanceStream(id), instanceEvent('WebhookConfigured', at, { url: receiver.url('/h'), enabled: true }));
    const endpoints = new EndpointDirectory(store, testLogger());
    endpoints.start();
    await endpoints.reach(id, 2_000);
    const secrets = new InMemoryWebhookSecretStore();
    receiver.secret('/h', await secrets.getOrCreate(id));
    receiver.script('/h', 'hang');
    const replica = (): Router => {
      const breaker = new CircuitBreaker(5, 30_000);
      const attempter = new Attempter(secrets, client, breaker, { schedule: [0, 5_000, 30_000], random: () => 0.5 }, 'w1', () => new Date());
      return new Router(store, store, endpoints, attempter, breaker, testLogger(), { concurrency: 4, attemptTimeoutMs: TIMEOUT_MS, slowAfterMs: 200 });
    };
    const event = async (n: number): Promise<{ commit: Commit; id: string }> => {
      const { version } = await append(messageStream(id, `m${n}`), messageEvent('MessageSent', at, { message_id: `m${n}`, to: '4915100000001' }));
      const [commit] = (await store.readPattern(messageStream(id, `m${n}`), version, 1)).commits as [Commit];
      return { commit, id: `evt_${version}_0` };
    };
    const hand = (router: Router, commit: Commit, answers: string[]): void =>
      router.handle(
        id,
        { commit, deliveryCount: 1, ack: () => void answers.push('ack'), nak: () => void answers.push('nak'), inProgress: () => undefined },
        true,
      );
    const notBeforeOf = async (delivery: string): Promise<unknown> => (await store.readStream(deliveryStream(id, delivery)))[0]?.events[0]?.data.not_before;

    const before = replica();
    const m1 = await event(1);
    const answers: string[] = [];
    hand(before, m1.commit, answers);
    for (let i = 0; i < 200 && answers.length === 0; i++) await sleep(10);
    expect(answers).toEqual(['ack']);
    const after = replica();
    const m2 = await event(2);
    hand(after, m2.commit, answers);
    await after.idle();
    expect(answers).toEqual(['ack', 'ack']);
    expect(receiver.on('/h').map((r) => r.body.data.message_id)).toEqual(['m1']);
    expect(await notBeforeOf(m2.id)).toBe(await notBeforeOf(m1.id));
    await before.idle();
    await endpoints.stop();
  }, 30_000);
});
