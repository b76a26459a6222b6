import { instanceEvent, type InstanceEvent } from '../events';
import type { RecordConnectionFact } from './commands';
import { activeRestriction, type ExistingInstance, type InstanceState } from './state';

/**
 * What a connection fact means for the instance (pure, part of the instance's `decide`):
 * - a fact from a connection that started before the latest reset is stale and records nothing: a reset racing a
 *   late "connected" leaves the instance reset, not connected to a device that was just logged out;
 * - a QR code is announced once per wait for a scan (never its content);
 * - connecting to a number other than the linked one links it first;
 * - a QR code that expired unscanned returns the instance to `created`; so does a replica lost while showing one
 *   (`REPLICA_LOST`, recorded once); disconnects, logouts and failures carry their
 *   reason; a disconnect says whether the instance reconnects by itself (only a linked one does);
 * - a restriction is recorded once while it holds (each refused send reports it again), again when WhatsApp names a
 *   new end; its lifting only when one holds.
 */
/**
 * The reason recorded for an unlinked instance left showing a QR code (or connecting) by a sessions replica that died
 * without shutting down: no replica shows that QR code any more, and none takes an unlinked instance over.
 */
export const REPLICA_LOST = 'replica_lost';

/** An instance that is not linked and whose last state is a connection starting or a QR code shown. */
export const awaitsScan = (state: ExistingInstance): boolean => state.linkedNumber === null && (state.lifecycle === 'qr' || state.lifecycle === 'connecting');

export const decideConnectionFact = (command: RecordConnectionFact, state: InstanceState): InstanceEvent[] => {
  if (!state.exists || state.resets !== command.resets) return [];
  const { fact, now } = command;
  switch (fact.type) {
    case 'connecting':
      return [instanceEvent('InstanceConnecting', now, {})];
    case 'qr':
      return state.lifecycle === 'qr' ? [] : [instanceEvent('InstanceQrIssued', now, {})];
    case 'connected':
      return [
        ...(state.linkedNumber === fact.number ? [] : [instanceEvent('InstanceLinked', now, { number: fact.number })]),
        instanceEvent('InstanceConnected', now, {}),
      ];
    case 'disconnected':
      // Only while a QR code may still be thought on screen: a second replica's sweep, or one behind the log, adds nothing.
      if (fact.reason === REPLICA_LOST && !awaitsScan(state)) return [];
      return fact.reason === 'qr_expired'
        ? [instanceEvent('InstanceQrExpired', now, {})]
        : // A linked instance logs in again from its stored link (the holder of its lease, or whichever takes it);
          // an unlinked one (its QR code on screen) does not: get_qrcode starts anew.
          [instanceEvent('InstanceDisconnected', now, { reason: fact.reason, reconnecting: state.linkedNumber !== null })];
    case 'logged_out':
      return [instanceEvent('InstanceLoggedOut', now, { reason: fact.reason })];
    case 'failed':
      return [instanceEvent('InstanceFailed', now, { reason: fact.reason })];
    case 'restricted': {
      // Every refused send reports it: news only when none holds, or WhatsApp now names a different end.
      const current = activeRestriction(state, Date.parse(now));
      if (current && (fact.until === null || fact.until === current.until)) return [];
      return [instanceEvent('InstanceRestricted', now, { until: fact.until })];
    }
    case 'unrestricted':
      return activeRestriction(state, Date.parse(now)) ? [instanceEvent('InstanceRestrictionLifted', now, {})] : [];
  }
};
