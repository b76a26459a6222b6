import { createServer, type Server } from 'node:http';
import { createDeliveryClient, InMemoryEventStore, InMemoryWebhookSecretStore, instanceIdFor } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { sleep } from '../../../../test/harness/wait';
import { attemptParts, configureWebhook, delivererOn, routerOn, sendMessages, type Sent } from '../../../../test/harness/webhooksWorkerRig';
import { deliveryStream } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';

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
    await configureWebhook(store, ID, `http://127.0.0.1:${port}/h`, AT);
    const endpoints = new EndpointDirectory(store, testLogger());
    endpoints.start();
    await endpoints.reach(ID, 2_000);
    const client = createDeliveryClient({ timeoutMs: TIMEOUT_MS, allowPrivateNetworks: true });
    // The router and, later, the deliverer share one attempter and breaker, as on one replica.
    const wiring = { store, endpoints, ...attemptParts(new InMemoryWebhookSecretStore(), client) };
    const router = routerOn(wiring, { concurrency: 4, attemptTimeoutMs: TIMEOUT_MS, slowAfterMs: 200 });

    const [{ commit, id }] = (await sendMessages(store, ID, 1)) as [Sent];
    const answers: string[] = [];
    router.handle(ID, { commit, deliveryCount: 1, ack: () => void answers.push('ack'), nak: () => void answers.push('nak'), inProgress: () => undefined });
    await router.idle(); // handed off at 200 ms, the 2xx came at 400 ms and was appended to the pending record
    const stream = deliveryStream(ID, id);
    const record = (await store.readStream(stream)).flatMap((c) => c.events.map((e) => e.type));
    expect(record).toEqual(['DeliveryScheduled', 'DeliveryAttempted']);
    expect(bodies).toHaveLength(1);

    // The deliverer reaches the job after not_before (start + 1 s time-out + 5 s margin).
    const notBefore = Date.parse(String((await store.readStream(stream))[0]!.events[0]!.data.not_before));
    await sleep(Math.max(0, notBefore - Date.now()) + 100);
    const deliverer = delivererOn(wiring, { batch: 10, ackWaitMs: 30_000 });
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
