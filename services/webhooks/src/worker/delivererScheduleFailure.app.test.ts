import {
  createDeliveryClient,
  InMemoryEventStore,
  InMemoryWebhookSecretStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  unavailable,
  type EventStore,
} from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { sleep } from '../../../../test/harness/wait';
import { WebhookReceiver } from '../../../../test/harness/webhookReceiver';
import { deliveryEvent, deliveryStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { Attempter } from './attempter';
import { CircuitBreaker } from './circuitBreaker';
import { Deliverer } from './deliverer';

const ID = instanceIdFor('acme', 'schedule-failure');

it('makes the next attempt though scheduling it failed once after a marker-driven attempt', async () => {
  const receiver = new WebhookReceiver();
  await receiver.start();
  const client = createDeliveryClient({ timeoutMs: 2_000, allowPrivateNetworks: true });
  const store = new InMemoryEventStore();
  const url = receiver.url('/h');
  const at = new Date().toISOString();
  const add = (s: string, events: Parameters<EventStore['append']>[1], id: string) => store.append(s, events, { expectedVersion: 'any', commandId: id });
  await add(instanceStream(ID), [instanceEvent('InstanceCreated', at, { instance_id: ID, account: 'acme' })], 'i1');
  await add(instanceStream(ID), [instanceEvent('WebhookConfigured', at, { url, enabled: true })], 'i2');
  const secrets = new InMemoryWebhookSecretStore();
  receiver.secret('/h', await secrets.getOrCreate(ID));
  const endpoints = new EndpointDirectory(store, testLogger());
  endpoints.start();
  await endpoints.reach(ID, 2_000);
  const stream = deliveryStream(ID, 'evt_9_0');
  const body = JSON.stringify({ id: 'evt_9_0', type: 'message.sent', instance_id: ID, timestamp: at, data: {} });
  await add(
    stream,
    [
      deliveryEvent('DeliveryScheduled', at, { delivery_id: 'evt_9_0', instance_id: ID, event_type: 'message.sent', body }),
      deliveryEvent('DeliveryAttempted', at, {
        attempt: 1,
        url,
        outcome: 'retry',
        status: 500,
        error: null,
        duration_ms: 1,
        next_attempt_in_ms: 0,
        worker: 'w0',
      }),
    ],
    'd1',
  );
  receiver.script('/h', { status: 503 }, { status: 503 }); // attempts 2 and 3 fail, 4 succeeds
  let calls = 0;
  // NATS unavailable for a moment right after attempt 3 (made from a due marker) was recorded.
  const flaky: EventStore = Object.assign(Object.create(store) as EventStore, {
    schedule: async (...args: Parameters<EventStore['schedule']>) => {
      if (++calls === 2) throw unavailable('event_store_unavailable', 'NATS unreachable');
      return store.schedule(...args);
    },
  });
  const breaker = new CircuitBreaker(50, 30_000);
  const attempter = new Attempter(secrets, client, breaker, { schedule: [0, 0, 200, 200, 200], random: () => 0.5 }, 'w1', () => new Date());
  const deliverer = new Deliverer(flaky, flaky, endpoints, attempter, breaker, testLogger(), {
    random: () => 0.5,
    concurrency: 4,
    batch: 16,
    ackWaitMs: 10_000,
    now: () => new Date(),
    holdUpToMs: 0,
  });
  await deliverer.start();
  try {
    await sleep(5_000); // attempt 4 due 200 ms after attempt 3; the job put back returns after 2 s
    const types = (await store.readStream(stream)).flatMap((c) => c.events.map((e) => e.type));
    expect(types.filter((t) => t === 'DeliveryAttempted')).toHaveLength(4);
  } finally {
    await deliverer.stop();
    await endpoints.stop();
    await client.close();
    await receiver.stop();
  }
}, 20_000);
