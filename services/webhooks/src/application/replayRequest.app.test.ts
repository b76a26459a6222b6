import { InMemoryEventStore, instanceEvent, instanceIdFor, instanceStream, isAppError, newCommandId } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import { replayStream } from '../replay/events';
import { DeliveriesService } from './deliveriesService';

// Application tests of asking for a replay (GET /v1/replay_webhooks): the real service and endpoint directory on two
// in-memory stores. A client that got 503 service_timeout retries; the request may have been taken after all (a hunt
// saw it run). Given an Idempotency-Key, when the same request comes again, then the same replay answers and nothing
// new is recorded.

const ID = instanceIdFor('acme', 'replay-key');
const WINDOW = { since: '2026-11-22T10:00:00Z', until: '', types: '' };

describe('DeliveriesService.replay (application, in-memory stores)', () => {
  let events: InMemoryEventStore;
  let deliveries: InMemoryEventStore;
  let endpoints: EndpointDirectory;
  let service: DeliveriesService;

  beforeEach(async () => {
    events = new InMemoryEventStore();
    deliveries = new InMemoryEventStore();
    await events.append(
      instanceStream(ID),
      [
        instanceEvent('InstanceCreated', '2026-11-22T10:00:00.000Z', { instance_id: ID, account: 'acme' }),
        instanceEvent('WebhookConfigured', '2026-11-22T10:00:00.000Z', { url: 'https://hooks.example/a', enabled: true }),
      ],
      { expectedVersion: 0, commandId: newCommandId() },
    );
    endpoints = new EndpointDirectory(events, testLogger());
    endpoints.start();
    service = new DeliveriesService(deliveries, endpoints);
  });
  afterEach(() => endpoints.stop());

  const requests = async (): Promise<string[]> =>
    (await deliveries.readPattern(`${ID}.replay.*`, 0, 100)).commits.flatMap((c) => c.events.filter((e) => e.type === 'ReplayRequested').map(() => c.stream));
  const refusal = (promise: Promise<unknown>): Promise<unknown> =>
    promise.then(
      () => null,
      (error: unknown) => (isAppError(error) ? [error.kind, error.code] : error),
    );

  it('answers a retry with the same Idempotency-Key with the same replay, recording one request', async () => {
    const first = await service.replay('acme', ID, WINDOW, 'replay-1');
    const again = await service.replay('acme', ID, WINDOW, 'replay-1');
    expect(again).toBe(first);
    expect(await requests()).toEqual([replayStream(ID, first)]);
  });

  it('answers the same replay to a retry though the webhook was switched off since (it was taken before)', async () => {
    const first = await service.replay('acme', ID, WINDOW, 'replay-2');
    await events.append(instanceStream(ID), [instanceEvent('WebhookDisabled', '2026-11-22T10:05:00.000Z', { reason: 'gone' })], {
      expectedVersion: 'any',
      commandId: newCommandId(),
    });
    await endpoints.reach(ID, 1_000);
    expect(await service.replay('acme', ID, WINDOW, 'replay-2')).toBe(first);
    expect(await refusal(service.replay('acme', ID, WINDOW, 'replay-3'))).toEqual(['conflict', 'webhook_disabled']);
  });

  it('refuses the key used again for another window with 409 idempotency_key_reused, recording nothing', async () => {
    await service.replay('acme', ID, WINDOW, 'replay-4');
    expect(await refusal(service.replay('acme', ID, { ...WINDOW, types: 'message.received' }, 'replay-4'))).toEqual(['conflict', 'idempotency_key_reused']);
    expect(await refusal(service.replay('acme', ID, { ...WINDOW, until: '2026-11-23T10:00:00Z' }, 'replay-4'))).toEqual(['conflict', 'idempotency_key_reused']);
    expect(await requests()).toHaveLength(1);
  });

  it('starts a replay of its own for each request without a key, and for each key', async () => {
    const ids = [await service.replay('acme', ID, WINDOW), await service.replay('acme', ID, WINDOW), await service.replay('acme', ID, WINDOW, 'replay-5')];
    expect(new Set(ids).size).toBe(3);
    expect(await requests()).toHaveLength(3);
  });

  it('makes the same key on another instance another replay', async () => {
    const other = instanceIdFor('acme', 'replay-key-2');
    await events.append(
      instanceStream(other),
      [
        instanceEvent('InstanceCreated', '2026-11-22T10:00:00.000Z', { instance_id: other, account: 'acme' }),
        instanceEvent('WebhookConfigured', '2026-11-22T10:00:00.000Z', { url: 'https://hooks.example/b', enabled: true }),
      ],
      { expectedVersion: 0, commandId: newCommandId() },
    );
    await endpoints.reach(other, 1_000);
    expect(await service.replay('acme', other, WINDOW, 'replay-6')).not.toBe(await service.replay('acme', ID, WINDOW, 'replay-6'));
  });
});
