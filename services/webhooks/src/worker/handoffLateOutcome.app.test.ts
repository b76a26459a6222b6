import { createServer, type Server } from 'node:http';
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
import { deliveryStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { Attempter } from './attempter';
import { CircuitBreaker } from './circuitBreaker';
import { Deliverer } from './deliverer';
import { Router } from './router';

// A handed-off attempt that ends in a 2xx (its outcome appended late) is not POSTed again by the deliverer when it
// takes the DeliveryScheduled job after `not_before` (a busy lane, a restart of every replica): the job's commit is
// not the whole record then (it was, for a fresh job, before hand-offs existed).
const ID = instanceIdFor('acme', 'review-fresh');
const AT = '2026-11-23T10:00:00.000Z';
const TIMEOUT_MS = 1_000;

describe('a handed-off delivery whose attempt succeeded late (application, in-memory store)', () => {
  const bodies: string[] = [];
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        bodies.push(raw);
        setTimeout(() => res.writeHead(200).end(), 400); // 2xx, but slower than slowAfterMs
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('POSTs a delivery once when its handed-off attempt succeeded late', async () => {
    const store = new InMemoryEventStore();
    const append = (stream: string, ...events: NewEvent[]) => store.append(stream, events, { expectedVersion: 'any', commandId: `c-${Math.random()}` });
    await append(instanceStream(ID), instanceEvent('InstanceCreated', AT, { instance_id: ID, account: 'acme' }));
    await append(instanceStream(ID), instanceEvent('WebhookConfigured', AT, { url: `http://127.0.0.1:${port}/h`, enabled: true }));
    const endpoints = new EndpointDirectory(store, testLogger());
    endpoints.start();
    await endpoints.reach(ID, 2_000);
    const secrets = new InMemoryWebhookSecretStore();
    const client = createDeliveryClient({ timeoutMs: TIMEOUT_MS, allowPrivateNetworks: true });
    const breaker = new CircuitBreaker(5, 30_000);
    const attempter = new Attempter(secrets, client, breaker, { schedule: [0, 5_000, 30_000], random: () => 0.5 }, 'w1', () => new Date());
    const router = new Router(store, store, endpoints, attempter, breaker, testLogger(), { concurrency: 4, attemptTimeoutMs: TIMEOUT_MS, slowAfterMs: 200 });

    const { version } = await append(messageStream(ID, 'm1'), messageEvent('MessageSent', AT, { message_id: 'm1', to: '4915100000001' }));
    const [commit] = (await store.readPattern('>', version, 1)).commits as [Commit];
    const answers: string[] = [];
    router.handle(ID, { commit, deliveryCount: 1, ack: () => void answers.push('ack'), nak: () => void answers.push('nak'), inProgress: () => undefined });
    await router.idle(); // handed off at 200 ms, the 2xx came at 400 ms and was appended to the pending record
    const stream = deliveryStream(ID, `evt_${version}_0`);
    const record = (await store.readStream(stream)).flatMap((c) => c.events.map((e) => e.type));
    expect(record).toEqual(['DeliveryScheduled', 'DeliveryAttempted']);
    expect(bodies).toHaveLength(1);

    // The deliverer reaches the job after not_before (start + 1 s time-out + 5 s margin).
    const notBefore = Date.parse(String((await store.readStream(stream))[0]!.events[0]!.data.not_before));
    await sleep(Math.max(0, notBefore - Date.now()) + 100);
    const deliverer = new Deliverer(store, store, endpoints, attempter, breaker, testLogger(), {
      random: () => 0.5,
      concurrency: 4,
      batch: 10,
      ackWaitMs: 30_000,
      now: () => new Date(),
    });
    await deliverer.start();
    for (let i = 0; i < 100 && bodies.length < 2; i++) await sleep(20);
    await sleep(500);
    await deliverer.stop();
    await endpoints.stop();
    await client.close();
    // POSTed once; the record holds the late 2xx, and nothing after it.
    expect(bodies).toHaveLength(1);
    expect((await store.readStream(stream)).flatMap((c) => c.events.map((e) => e.type)).filter((t) => t === 'DeliveryAttempted')).toHaveLength(1);
  }, 20_000);
});
