import {
  InMemoryEventStore,
  instanceEvent,
  instanceIdFor,
  instanceStream,
  MAX_MESSAGE_BYTES,
  MAX_PAGE_BYTES,
  newCommandId,
  StoreSpecification,
  type ExpectedCommit,
  type GivenCommit,
} from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { deliveredStream, deliveryEvent, deliveryStream, type AttemptOutcome, type DeliveryEvent } from '../delivery/events';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { DeliveriesService, deliveryBytes } from './deliveriesService';

// Application tests of listing and redelivering webhooks: the real service and endpoint directory on two in-memory
// stores, as in production (instance events in one, delivery records in the WEBHOOKS one); no NATS, no HTTP.

const ID = instanceIdFor('acme', 'create-1');
const HOOK_URL = 'https://hooks.example/a';
const at = (minute: number): string => `2026-11-22T10:${String(minute).padStart(2, '0')}:00.000Z`;

const scheduled = (id: string, minute: number): DeliveryEvent =>
  deliveryEvent('DeliveryScheduled', at(minute), { delivery_id: id, instance_id: ID, event_type: 'message.sent', body: `{"id":"${id}"}` });
const attempted = (attempt: number, outcome: AttemptOutcome, status: number, minute: number): DeliveryEvent =>
  deliveryEvent('DeliveryAttempted', at(minute), {
    attempt,
    url: HOOK_URL,
    outcome,
    status,
    error: null,
    duration_ms: 5,
    next_attempt_in_ms: null,
    worker: 'w1',
  });

/** The four ends a delivery record can be at, as the router and the deliverer store them. */
const delivered = (id: string, minute: number): GivenCommit => ({
  stream: deliveredStream(ID, id),
  events: [scheduled(id, minute), attempted(1, 'delivered', 200, minute)],
});
const dead = (id: string, minute: number): GivenCommit => ({
  stream: deliveryStream(ID, id),
  events: [
    scheduled(id, minute),
    attempted(1, 'gone', 410, minute),
    deliveryEvent('DeliveryDeadLettered', at(minute), { reason: 'endpoint answered 410 Gone' }),
  ],
});
const pending = (id: string, minute: number): GivenCommit => ({
  stream: deliveryStream(ID, id),
  events: [scheduled(id, minute), attempted(1, 'retry', 500, minute)],
});
const dropped = (id: string, minute: number): GivenCommit => ({
  stream: deliveryStream(ID, id),
  events: [scheduled(id, minute), deliveryEvent('DeliveryDropped', at(minute), { reason: 'webhook disabled' })],
});
const redeliveryRequested = (id: string, round: number): ExpectedCommit => ({
  stream: deliveryStream(ID, id),
  events: [{ type: 'RedeliveryRequested', data: { round } }],
});

describe('DeliveriesService (application, in-memory stores)', () => {
  let events: InMemoryEventStore;
  let deliveries: InMemoryEventStore;
  let endpoints: EndpointDirectory;
  let service: DeliveriesService;
  let given: ReturnType<typeof StoreSpecification.for>;

  beforeEach(async () => {
    events = new InMemoryEventStore();
    deliveries = new InMemoryEventStore();
    // The instance and its webhook, as the instances service stores them; ownership is checked against them.
    await events.append(
      instanceStream(ID),
      [
        instanceEvent('InstanceCreated', at(0), { instance_id: ID, account: 'acme' }),
        instanceEvent('WebhookConfigured', at(0), { url: HOOK_URL, enabled: true }),
      ],
      { expectedVersion: 0, commandId: newCommandId() },
    );
    endpoints = new EndpointDirectory(events, testLogger());
    endpoints.start();
    service = new DeliveriesService(deliveries, endpoints);
    given = StoreSpecification.for(deliveries);
  });

  afterEach(() => endpoints.stop());

  const history = [delivered('evt_1_0', 1), dead('evt_2_0', 2), pending('evt_3_0', 3), dropped('evt_4_0', 4), dead('evt_5_0', 5)];

  describe('list', () => {
    it('lists every delivery of the instance, newest first, with its status and attempts', async () => {
      const { answer } = await given(...history)
        .when(() => service.list('acme', ID, '', 0))
        .then({ commits: [] });
      expect(answer.items.map((d) => [d.deliveryId, d.status])).toEqual([
        ['evt_5_0', 'dead'],
        ['evt_4_0', 'dropped'],
        ['evt_3_0', 'pending'],
        ['evt_2_0', 'dead'],
        ['evt_1_0', 'delivered'],
      ]);
      expect(answer.items[3]).toMatchObject({
        eventType: 'message.sent',
        reason: 'endpoint answered 410 Gone',
        attempts: [{ attempt: 1, url: HOOK_URL, outcome: 'gone', status: 410, worker: 'w1' }],
      });
    });

    it('lists only the dead-lettered ones when asked for status dead', async () => {
      const { answer } = await given(...history)
        .when(() => service.list('acme', ID, 'dead', 100))
        .then({ commits: [] });
      expect(answer.items.map((d) => d.deliveryId)).toEqual(['evt_5_0', 'evt_2_0']);
    });

    it('answers at most `limit` deliveries and a cursor that goes on after them, to the end', async () => {
      const { answer } = await given(...history)
        .when(async () => {
          const first = await service.list('acme', ID, '', 2);
          const second = await service.list('acme', ID, '', 2, first.nextCursor ?? '');
          const last = await service.list('acme', ID, '', 2, second.nextCursor ?? '');
          return [first, second, last];
        })
        .then({ commits: [] });
      expect(answer.map((p) => p.items.map((d) => d.deliveryId))).toEqual([['evt_5_0', 'evt_4_0'], ['evt_3_0', 'evt_2_0'], ['evt_1_0']]);
      expect(answer.map((p) => p.nextCursor)).toEqual(['evt_4_0', 'evt_2_0', null]);
    });

    it('lists the newest of many deliveries first, pages back through them, and finds an old dead one', async () => {
      // More records than the first window of the backward scan (4,096 sequences), and than the oldest 20,000 the
      // listing used to read: a busy instance's newest deliveries never showed.
      const many = Array.from({ length: 21_000 }, (_, i) => delivered(`evt_${i + 10}_0`, 10));
      const { answer } = await given(dead('evt_1_0', 1), ...many)
        .when(async () => {
          const first = await service.list('acme', ID, '', 3);
          const second = await service.list('acme', ID, '', 3, first.nextCursor ?? '');
          const deadOnes = await service.list('acme', ID, 'dead', 10);
          return { first, second, deadOnes };
        })
        .then({ commits: [] });
      expect(answer.first.items.map((d) => d.deliveryId)).toEqual(['evt_21009_0', 'evt_21008_0', 'evt_21007_0']);
      expect(answer.second.items.map((d) => d.deliveryId)).toEqual(['evt_21006_0', 'evt_21005_0', 'evt_21004_0']);
      expect(answer.deadOnes).toEqual({ items: [expect.objectContaining({ deliveryId: 'evt_1_0', status: 'dead' })], nextCursor: null });
    });

    it('refuses a cursor that names none of the instance deliveries (400 invalid_cursor)', async () => {
      await given(...history)
        .when(() => service.list('acme', ID, '', 2, 'evt_99_0'))
        .thenThrows({ kind: 'invalid_argument', code: 'invalid_cursor' });
    });

    it('shows a redelivered delivery as pending again, keeping its earlier attempts', async () => {
      const { answer } = await given(dead('evt_2_0', 2), {
        stream: deliveryStream(ID, 'evt_2_0'),
        events: [deliveryEvent('RedeliveryRequested', at(9), { round: 1 })],
      })
        .when(() => service.list('acme', ID, '', 10))
        .then({ commits: [] });
      expect(answer.items).toMatchObject([
        { deliveryId: 'evt_2_0', status: 'pending', reason: null, round: 1, attemptsInRound: 0, attempts: [{ outcome: 'gone' }] },
      ]);
    });

    it('ends a page at about 1 MiB of deliveries whatever its limit, so it fits a gRPC answer (was 500 response_too_large)', async () => {
      // A 2,000-character webhook URL and a long error on each of 10 attempts: ~23 KB a delivery, 300 of them ~7 MB.
      const failing = (id: string, attempts: number): GivenCommit => ({
        stream: deliveryStream(ID, id),
        events: [
          scheduled(id, 1),
          ...Array.from({ length: attempts }, (_, i) => ({ ...attempted(i + 1, 'retry', 500, 1), data: { ...longAttempt, attempt: i + 1 } })),
        ],
      });
      const longAttempt = { ...attempted(1, 'retry', 500, 1).data, url: `${HOOK_URL}?t=${'a'.repeat(2_000)}`, error: 'e'.repeat(200) };
      // The newest delivery alone is larger than the budget (600 attempts): it goes alone on its page.
      const many = [...Array.from({ length: 300 }, (_, i) => failing(`evt_${i + 10}_0`, 10)), failing('evt_999_0', 600)];
      const { answer } = await given(...many)
        .when(async () => {
          const pages = [await service.list('acme', ID, '', 1_000)];
          for (let i = 0; i < 50 && pages[pages.length - 1]!.nextCursor; i++)
            pages.push(await service.list('acme', ID, '', 1_000, pages[pages.length - 1]!.nextCursor!));
          return pages;
        })
        .then({ commits: [] });
      expect(answer[0]!.items.map((d) => d.deliveryId)).toEqual(['evt_999_0']);
      expect(answer.flatMap((p) => p.items).length).toBe(301);
      expect(answer[answer.length - 1]!.nextCursor).toBeNull();
      for (const page of answer.slice(1)) {
        expect(page.items.reduce((n, d) => n + deliveryBytes(d), 0)).toBeLessThanOrEqual(MAX_PAGE_BYTES);
        expect(Buffer.byteLength(JSON.stringify(page.items))).toBeLessThan(MAX_MESSAGE_BYTES);
      }
    });

    it('refuses an unknown status', async () => {
      await given(...history)
        .when(() => service.list('acme', ID, 'failed', 10))
        .thenThrows({ kind: 'invalid_argument', code: 'invalid_status' });
    });

    it("answers 404 for another account's instance and for an unknown one", async () => {
      await given(...history)
        .when(() => service.list('other', ID, '', 10))
        .thenThrows({ kind: 'not_found', code: 'instance_not_found' });
      await given()
        .when(() => service.list('acme', instanceIdFor('acme', 'never'), '', 10))
        .thenThrows({ kind: 'not_found', code: 'instance_not_found' });
    });

    it('answers 503 instance_state_catching_up, not a 404 for an instance that exists, while the directory cannot catch up', async () => {
      // A directory that never folds (its subscription cannot start: NATS electing a leader after a node died, say).
      const behind = new DeliveriesService(deliveries, new EndpointDirectory(events, testLogger()));
      await given(...history)
        .when(() => behind.list('acme', ID, '', 10))
        .thenThrows({ kind: 'unavailable', code: 'instance_state_catching_up' });
    });
  });

  describe('redeliver', () => {
    it('redelivers one dead-lettered delivery: a new round on its job stream, for the deliverer to pick up', async () => {
      await given(...history)
        .when(() => service.redeliver('acme', ID, 'evt_2_0'))
        .then({ commits: [redeliveryRequested('evt_2_0', 1)], answer: ['evt_2_0'] });
    });

    it('redelivers every dead-lettered delivery when no id is given, and nothing else', async () => {
      await given(...history)
        .when(() => service.redeliver('acme', ID, ''))
        .then({ commits: [redeliveryRequested('evt_2_0', 1), redeliveryRequested('evt_5_0', 1)], answer: ['evt_2_0', 'evt_5_0'] });
    });

    it('answers an empty list when nothing is dead-lettered', async () => {
      await given(delivered('evt_1_0', 1), pending('evt_3_0', 3))
        .when(() => service.redeliver('acme', ID, ''))
        .then({ commits: [], answer: [] });
    });

    it('numbers the rounds when a redelivered delivery dies again and is redelivered again', async () => {
      await given(dead('evt_2_0', 2), {
        stream: deliveryStream(ID, 'evt_2_0'),
        events: [
          deliveryEvent('RedeliveryRequested', at(6), { round: 1 }),
          attempted(2, 'retry', 503, 7),
          deliveryEvent('DeliveryDeadLettered', at(7), { reason: 'retries exhausted after 1 attempt(s)' }),
        ],
      })
        .when(() => service.redeliver('acme', ID, 'evt_2_0'))
        .then({ commits: [redeliveryRequested('evt_2_0', 2)], answer: ['evt_2_0'] });
    });

    it('refuses with 409 webhook_disabled while the webhook is off (the redelivery would be dropped at its turn, for good)', async () => {
      await events.append(instanceStream(ID), [instanceEvent('WebhookConfigured', at(8), { url: HOOK_URL, enabled: false })], {
        expectedVersion: 'any',
        commandId: newCommandId(),
      });
      await given(...history)
        .when(() => service.redeliver('acme', ID, 'evt_2_0'))
        .thenThrows({ kind: 'conflict', code: 'webhook_disabled' });
      await given()
        .when(() => service.redeliver('acme', ID, ''))
        .thenThrows({ kind: 'conflict', code: 'webhook_disabled' });
    });

    it('refuses a delivery that is not dead-lettered with 409, storing nothing', async () => {
      // Delivered, pending, dropped: the history goes in with the first case; the others run on the same store.
      const [first, ...rest] = ['evt_1_0', 'evt_3_0', 'evt_4_0'];
      await given(...history)
        .when(() => service.redeliver('acme', ID, first))
        .thenThrows({ kind: 'conflict', code: 'delivery_not_failed' });
      for (const id of rest) {
        await given()
          .when(() => service.redeliver('acme', ID, id))
          .thenThrows({ kind: 'conflict', code: 'delivery_not_failed' });
      }
    });

    it('stores one round when two redeliveries of the same delivery race, and tells the loser', async () => {
      const dead1 = dead('evt_2_0', 2);
      await deliveries.append(dead1.stream, dead1.events, { expectedVersion: 0, commandId: newCommandId() });
      const outcomes = await Promise.allSettled([service.redeliver('acme', ID, 'evt_2_0'), service.redeliver('acme', ID, 'evt_2_0')]);
      expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
      const lost = outcomes.find((o) => o.status === 'rejected');
      expect(lost?.status === 'rejected' && (lost.reason as { code: string }).code).toBe('delivery_changed');
      const commits = await deliveries.readStream(deliveryStream(ID, 'evt_2_0'));
      expect(commits.flatMap((c) => c.events.map((e) => e.type)).filter((t) => t === 'RedeliveryRequested')).toHaveLength(1);
      // Redeliver-all racing the same way stores one round per delivery too.
      const dead2 = dead('evt_5_0', 5);
      await deliveries.append(dead2.stream, dead2.events, { expectedVersion: 0, commandId: newCommandId() });
      await Promise.all([service.redeliver('acme', ID, ''), service.redeliver('acme', ID, '')]);
      const rounds = (await deliveries.readStream(deliveryStream(ID, 'evt_5_0'))).flatMap((c) => c.events).filter((e) => e.type === 'RedeliveryRequested');
      expect(rounds).toHaveLength(1);
    });

    it('answers 404 for an unknown delivery and for another account', async () => {
      await given(...history)
        .when(() => service.redeliver('acme', ID, 'evt_9_0'))
        .thenThrows({ kind: 'not_found', code: 'delivery_not_found' });
      await given()
        .when(() => service.redeliver('other', ID, 'evt_2_0'))
        .thenThrows({ kind: 'not_found', code: 'instance_not_found' });
    });
  });
});
