import { DeciderSpecification } from '../eventStore';
import { instanceEvent } from '../events';
import { instanceDecider } from './decider';

const NOW = '2026-11-22T10:00:00.000Z';
const LATER = '2026-11-22T11:00:00.000Z';
const ID = '0123456789ABCDEF0123';

const given = DeciderSpecification.for(instanceDecider);

const created = instanceEvent('InstanceCreated', NOW, { instance_id: ID, account: 'acme' });

describe('Instance aggregate', () => {
  describe('create', () => {
    it('creates a new instance for the account', () => {
      given().when({ type: 'CreateInstance', instanceId: ID, account: 'acme', now: NOW }).then([created]);
    });
    it('is a no-op when the same account creates the same instance again (a retried command)', () => {
      given(created).when({ type: 'CreateInstance', instanceId: ID, account: 'acme', now: LATER }).then([]);
    });
    it('refuses another account creating an existing id', () => {
      given(created).when({ type: 'CreateInstance', instanceId: ID, account: 'other', now: LATER }).thenThrows('instance_exists');
    });
  });

  describe('webhook', () => {
    it('records the webhook url and enabled flag', () => {
      given(created)
        .when({ type: 'ConfigureWebhook', account: 'acme', url: 'https://hooks.example/a', enabled: true, now: LATER })
        .then([instanceEvent('WebhookConfigured', LATER, { url: 'https://hooks.example/a', enabled: true })]);
    });
    it('records nothing when the settings are unchanged', () => {
      given(created, instanceEvent('WebhookConfigured', NOW, { url: 'https://h.example', enabled: false }))
        .when({ type: 'ConfigureWebhook', account: 'acme', url: 'https://h.example', enabled: false, now: LATER })
        .then([]);
    });
    it('shows the webhook switched off once the endpoint answered 410 Gone, and can switch it on again', () => {
      const { state } = given(
        created,
        instanceEvent('WebhookConfigured', NOW, { url: 'https://h.example', enabled: true }),
        instanceEvent('WebhookDisabled', LATER, { reason: 'endpoint answered 410 Gone' }),
      );
      expect(state).toMatchObject({ webhook: { url: 'https://h.example', enabled: false } });
      given(
        created,
        instanceEvent('WebhookConfigured', NOW, { url: 'https://h.example', enabled: true }),
        instanceEvent('WebhookDisabled', LATER, { reason: 'gone' }),
      )
        .when({ type: 'ConfigureWebhook', account: 'acme', url: 'https://h.example', enabled: true, now: LATER })
        .then([instanceEvent('WebhookConfigured', LATER, { url: 'https://h.example', enabled: true })]);
    });
    it('records an event filter with the settings, and a change of the filter alone', () => {
      const filtered = instanceEvent('WebhookConfigured', NOW, { url: 'https://h.example', enabled: true, events: ['message.received'] });
      given(created)
        .when({ type: 'ConfigureWebhook', account: 'acme', url: 'https://h.example', enabled: true, events: ['message.received'], now: NOW })
        .then([filtered]);
      expect(given(created, filtered).state).toMatchObject({ webhook: { events: ['message.received'] } });
      given(created, filtered)
        .when({ type: 'ConfigureWebhook', account: 'acme', url: 'https://h.example', enabled: true, now: LATER })
        .then([instanceEvent('WebhookConfigured', LATER, { url: 'https://h.example', enabled: true })]);
    });
    it("answers not found for another account's instance", () => {
      given(created).when({ type: 'ConfigureWebhook', account: 'other', url: 'https://h.example', enabled: true, now: LATER }).thenThrows('instance_not_found');
    });
    it('answers not found for an instance that does not exist', () => {
      given().when({ type: 'ConfigureWebhook', account: 'acme', url: 'https://h.example', enabled: true, now: LATER }).thenThrows('instance_not_found');
    });
  });

  describe('reset', () => {
    it('records a reset for the owner', () => {
      given(created)
        .when({ type: 'ResetInstance', account: 'acme', now: LATER })
        .then([instanceEvent('InstanceReset', LATER, {})]);
    });
    it("answers not found for another account's instance", () => {
      given(created).when({ type: 'ResetInstance', account: 'other', now: LATER }).thenThrows('instance_not_found');
    });
    it('returns a linked instance to created, forgetting its number but keeping its webhook', () => {
      const { state } = given(
        created,
        instanceEvent('WebhookConfigured', NOW, { url: 'https://h.example', enabled: true }),
        instanceEvent('InstanceLinked', NOW, { number: '4915112345678' }),
        instanceEvent('InstanceConnected', NOW, {}),
        instanceEvent('InstanceReset', LATER, {}),
      );
      expect(state).toMatchObject({ lifecycle: 'created', since: LATER, linkedNumber: null, webhook: { url: 'https://h.example', enabled: true } });
    });
  });

  describe('lifecycle', () => {
    it('tracks state, since when, the linked number and the last disconnect reason', () => {
      const { state } = given(
        created,
        instanceEvent('InstanceConnecting', NOW, {}),
        instanceEvent('InstanceQrIssued', NOW, {}),
        instanceEvent('InstanceLinked', NOW, { number: '4915112345678' }),
        instanceEvent('InstanceConnected', NOW, {}),
        instanceEvent('InstanceDisconnected', LATER, { reason: 'connection_lost', reconnecting: true }),
      );
      expect(state).toMatchObject({
        lifecycle: 'disconnected',
        since: LATER,
        linkedNumber: '4915112345678',
        lastDisconnectReason: 'connection_lost',
      });
    });
    it('goes back to created when a connection ends before any link (nothing to reconnect), keeping the reason', () => {
      const { state } = given(
        created,
        instanceEvent('InstanceConnecting', NOW, {}),
        instanceEvent('InstanceDisconnected', LATER, { reason: 'connection_lost', reconnecting: true }),
      );
      expect(state).toMatchObject({ lifecycle: 'created', since: LATER, linkedNumber: null, lastDisconnectReason: 'connection_lost' });
    });
    it('keeps since unchanged when the state does not change', () => {
      const { state } = given(created, instanceEvent('InstanceReset', LATER, {}));
      expect(state).toMatchObject({ lifecycle: 'created', since: NOW });
    });
    it('forgets the number once logged out', () => {
      const { state } = given(
        created,
        instanceEvent('InstanceLinked', NOW, { number: '4915112345678' }),
        instanceEvent('InstanceLoggedOut', LATER, { reason: 'logged_out_on_phone' }),
      );
      expect(state).toMatchObject({ lifecycle: 'logged_out', linkedNumber: null, lastDisconnectReason: 'logged_out_on_phone' });
    });
  });

  describe('erasure', () => {
    const erased = instanceEvent('InstanceDataErased', LATER, {});
    it("records the erasure of the instance's data and shows when it happened", () => {
      given(created).when({ type: 'EraseInstanceData', account: 'acme', keyDestroyed: true, keyed: true, now: LATER }).then([erased]);
      expect(given(created, erased).state).toMatchObject({ dataErasedAt: LATER });
    });
    it('records the first erasure even when no content was ever sealed (no key to destroy)', () => {
      given(created).when({ type: 'EraseInstanceData', account: 'acme', keyDestroyed: false, keyed: false, now: LATER }).then([erased]);
    });
    it('records nothing more when erased again with nothing sealed since (idempotent)', () => {
      given(created, erased).when({ type: 'EraseInstanceData', account: 'acme', keyDestroyed: false, keyed: false, now: LATER }).then([]);
    });
    it('under an Idempotency-Key, records that it found nothing to erase, for its retries, and changes no state', () => {
      const already = instanceEvent('InstanceDataAlreadyErased', LATER, {});
      given(created, erased).when({ type: 'EraseInstanceData', account: 'acme', keyDestroyed: false, keyed: true, now: LATER }).then([already]);
      expect(given(created, erased, already).state).toEqual(given(created, erased).state);
    });
    it('records a new erasure when content was sealed since the last one (a new key was destroyed)', () => {
      given(created, erased).when({ type: 'EraseInstanceData', account: 'acme', keyDestroyed: true, keyed: true, now: LATER }).then([erased]);
    });
    it("answers not found for another account's instance", () => {
      given(created).when({ type: 'EraseInstanceData', account: 'other', keyDestroyed: false, keyed: false, now: LATER }).thenThrows('instance_not_found');
    });
  });
});
