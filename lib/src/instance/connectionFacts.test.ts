import { DeciderSpecification } from '../eventStore';
import { instanceEvent } from '../events';
import type { ConnectionFact } from './commands';
import { REPLICA_LOST } from './connectionFacts';
import { instanceDecider } from './decider';

const NOW = '2026-11-23T10:00:00.000Z';
const LATER = '2026-11-23T11:00:00.000Z';
const NUMBER = '4915112345678';

const given = DeciderSpecification.for(instanceDecider);
const created = instanceEvent('InstanceCreated', NOW, { instance_id: 'I1', account: 'acme' });
const connecting = instanceEvent('InstanceConnecting', NOW, {});
const qrIssued = instanceEvent('InstanceQrIssued', NOW, {});
const linked = instanceEvent('InstanceLinked', NOW, { number: NUMBER });
const connected = instanceEvent('InstanceConnected', NOW, {});
const reset = instanceEvent('InstanceReset', LATER, {});

/** A fact reported by a connection that started when the instance had been reset `resets` times. */
const fact = (f: ConnectionFact, resets = 0) => ({ type: 'RecordConnectionFact' as const, fact: f, resets, now: LATER });

describe('Instance aggregate: what a platform connection reports', () => {
  it('records a connection attempt', () => {
    given(created)
      .when(fact({ type: 'connecting' }))
      .then([instanceEvent('InstanceConnecting', LATER, {})]);
  });

  it('announces a QR code once while it waits for a scan (never its content), again after the wait ended', () => {
    given(created, connecting)
      .when(fact({ type: 'qr' }))
      .then([instanceEvent('InstanceQrIssued', LATER, {})]);
    given(created, connecting, qrIssued)
      .when(fact({ type: 'qr' }))
      .then([]);
    given(created, connecting, qrIssued, instanceEvent('InstanceQrExpired', NOW, {}), connecting)
      .when(fact({ type: 'qr' }))
      .then([instanceEvent('InstanceQrIssued', LATER, {})]);
  });

  it('ends a QR code whose replica was lost once, only while the unlinked instance still awaits a scan', () => {
    const lost = fact({ type: 'disconnected', reason: REPLICA_LOST });
    const ended = instanceEvent('InstanceDisconnected', LATER, { reason: REPLICA_LOST, reconnecting: false });
    given(created, connecting, qrIssued).when(lost).then([ended]);
    given(created, connecting).when(lost).then([ended]);
    // Already ended (by another replica's sweep), never shown, or linked (taken over, not ended).
    given(created, connecting, qrIssued, ended).when(lost).then([]);
    given(created).when(lost).then([]);
    given(created, linked, connecting).when(lost).then([]);
  });

  it('links a new number before connecting, and only connects an instance already linked to it', () => {
    given(created, connecting, qrIssued)
      .when(fact({ type: 'connected', number: NUMBER }))
      .then([instanceEvent('InstanceLinked', LATER, { number: NUMBER }), instanceEvent('InstanceConnected', LATER, {})]);
    given(created, linked, connected, instanceEvent('InstanceDisconnected', NOW, { reason: 'connection_lost', reconnecting: true }))
      .when(fact({ type: 'connected', number: NUMBER }))
      .then([instanceEvent('InstanceConnected', LATER, {})]);
    // Another phone scanned: the instance is linked anew.
    given(created, linked, connected)
      .when(fact({ type: 'connected', number: '4915199999999' }))
      .then([instanceEvent('InstanceLinked', LATER, { number: '4915199999999' }), instanceEvent('InstanceConnected', LATER, {})]);
  });

  it('turns an expired QR into QrExpired, and other ends into their events with the reason', () => {
    given(created, connecting, qrIssued)
      .when(fact({ type: 'disconnected', reason: 'qr_expired' }))
      .then([instanceEvent('InstanceQrExpired', LATER, {})]);
    given(created, linked, connected)
      .when(fact({ type: 'disconnected', reason: 'connection_lost' }))
      .then([instanceEvent('InstanceDisconnected', LATER, { reason: 'connection_lost', reconnecting: true })]);
    // Not linked (its QR code was on screen): nothing logs in again by itself; get_qrcode starts anew.
    given(created, connecting, qrIssued)
      .when(fact({ type: 'disconnected', reason: 'connection_lost' }))
      .then([instanceEvent('InstanceDisconnected', LATER, { reason: 'connection_lost', reconnecting: false })]);
    given(created, linked, connected)
      .when(fact({ type: 'logged_out', reason: 'logged_out_on_phone' }))
      .then([instanceEvent('InstanceLoggedOut', LATER, { reason: 'logged_out_on_phone' })]);
    given(created, linked)
      .when(fact({ type: 'failed', reason: 'forbidden' }))
      .then([instanceEvent('InstanceFailed', LATER, { reason: 'forbidden' })]);
  });

  describe('a reset racing a late report of the connection it ended', () => {
    it('ignores "connected" from a connection that started before the reset: the instance stays reset', () => {
      const race = given(created, connecting, qrIssued, reset);
      race.when(fact({ type: 'connected', number: NUMBER }, 0)).then([]);
      expect(race.state).toMatchObject({ lifecycle: 'created', linkedNumber: null, resets: 1 });
    });

    it('ignores every other late fact of the old connection too', () => {
      for (const late of [{ type: 'qr' }, { type: 'connecting' }, { type: 'disconnected', reason: 'connection_lost' }] as ConnectionFact[]) {
        given(created, linked, connected, reset).when(fact(late, 0)).then([]);
      }
    });

    it('records the facts of a connection started after the reset', () => {
      given(created, linked, connected, reset, connecting)
        .when(fact({ type: 'connected', number: NUMBER }, 1))
        .then([instanceEvent('InstanceLinked', LATER, { number: NUMBER }), instanceEvent('InstanceConnected', LATER, {})]);
    });

    it('a reset after the connection is recorded is decided as usual and wins', () => {
      const { state } = given(created, connecting, linked, connected, reset);
      expect(state).toMatchObject({ lifecycle: 'created', linkedNumber: null });
    });
  });

  it('records nothing for an instance that does not exist', () => {
    given()
      .when(fact({ type: 'connected', number: NUMBER }))
      .then([]);
  });
});

describe('Instance aggregate: the webhook answered 410 Gone', () => {
  const configured = instanceEvent('WebhookConfigured', NOW, { url: 'https://h.example/a', enabled: true });
  const disable = (url: string) => ({ type: 'DisableWebhook' as const, url, reason: 'endpoint answered 410 Gone', now: LATER });

  it('switches the webhook off', () => {
    given(created, configured)
      .when(disable('https://h.example/a'))
      .then([instanceEvent('WebhookDisabled', LATER, { reason: 'endpoint answered 410 Gone' })]);
  });

  it('leaves a webhook reconfigured meanwhile (another URL) on, and records nothing twice', () => {
    given(created, configured, instanceEvent('WebhookConfigured', NOW, { url: 'https://h.example/b', enabled: true }))
      .when(disable('https://h.example/a'))
      .then([]);
    given(created, configured, instanceEvent('WebhookDisabled', NOW, { reason: 'gone' }))
      .when(disable('https://h.example/a'))
      .then([]);
  });
});
