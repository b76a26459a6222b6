import { notFound, conflict } from '../errors';
import { asCurrentEvent, type Decider, type RecordedEvent } from '../eventStore';
import { instanceEvent, type InstanceEvent } from '../events';
import type { InstanceCommand } from './commands';
import { decideConnectionFact } from './connectionFacts';
import { activeRestriction, initialInstanceState, type ExistingInstance, type InstanceState } from './state';
import type { InstanceLifecycle } from '../validation';

export const instanceNotFound = () => notFound('instance_not_found', 'Instance not found');

/** The instance as its owner sees it; another account's instance does not exist for the caller. */
const ownedBy = (state: InstanceState, account: string): ExistingInstance => {
  if (!state.exists || state.account !== account) throw instanceNotFound();
  return state;
};

const decideInstance = (command: InstanceCommand, state: InstanceState): InstanceEvent[] => {
  switch (command.type) {
    case 'CreateInstance':
      if (state.exists) {
        // A retried create (same command, same derived id) is a no-op; anything else is a clash.
        if (state.account === command.account) return [];
        throw conflict('instance_exists', 'An instance with this id already exists');
      }
      return [instanceEvent('InstanceCreated', command.now, { instance_id: command.instanceId, account: command.account })];
    case 'ConfigureWebhook': {
      const instance = ownedBy(state, command.account);
      const { url, enabled, events = [] } = command;
      const same = instance.webhook?.url === url && instance.webhook.enabled === enabled && instance.webhook.events.join() === events.join();
      if (same) return [];
      return [instanceEvent('WebhookConfigured', command.now, { url, enabled, ...(events.length > 0 ? { events } : {}) })];
    }
    case 'ResetInstance':
      ownedBy(state, command.account);
      return [instanceEvent('InstanceReset', command.now, {})];
    case 'RecordConnectionFact':
      return decideConnectionFact(command, state);
    case 'DisableWebhook':
      // Only the endpoint that answered 410: a webhook reconfigured meanwhile (a new URL) stays as it is.
      if (!state.exists || state.webhook?.url !== command.url || !state.webhook.enabled) return [];
      return [instanceEvent('WebhookDisabled', command.now, { reason: command.reason })];
    case 'EraseInstanceData': {
      const instance = ownedBy(state, command.account);
      // Idempotent: erasing again with no content sealed since (no key was found to destroy) erases nothing more. Under
      // an Idempotency-Key that is recorded all the same (no InstanceDataErased: nothing was erased), because a retry
      // of it recognises itself by a record under its command id; without one it would erase what arrived since.
      if (instance.dataErasedAt && !command.keyDestroyed) return command.keyed ? [instanceEvent('InstanceDataAlreadyErased', command.now, {})] : [];
      return [instanceEvent('InstanceDataErased', command.now, {})];
    }
    default: {
      const unknown: never = command;
      throw new Error(`unknown command ${JSON.stringify(unknown)}`);
    }
  }
};

const enter = (state: ExistingInstance, lifecycle: InstanceLifecycle, at: string, changes: Partial<ExistingInstance> = {}): ExistingInstance => ({
  ...state,
  ...changes,
  lifecycle,
  since: state.lifecycle === lifecycle ? state.since : at,
});

export const evolveInstance = (state: InstanceState, event: InstanceEvent): InstanceState => {
  if (event.type === 'InstanceCreated') {
    return {
      exists: true,
      instanceId: event.data.instance_id,
      account: event.data.account,
      createdAt: event.occurredAt,
      lifecycle: 'created',
      since: event.occurredAt,
      webhook: null,
      linkedNumber: null,
      lastDisconnectReason: null,
      resets: 0,
      restriction: null,
      dataErasedAt: null,
    };
  }
  if (!state.exists) return state;
  const at = event.occurredAt;
  switch (event.type) {
    case 'WebhookConfigured':
      return { ...state, webhook: { url: event.data.url, enabled: event.data.enabled, events: event.data.events ?? [] } };
    case 'WebhookDisabled':
      return state.webhook ? { ...state, webhook: { ...state.webhook, enabled: false } } : state;
    case 'InstanceReset':
      return enter(state, 'created', at, { linkedNumber: null, lastDisconnectReason: null, resets: state.resets + 1, restriction: null });
    case 'InstanceConnecting':
      return enter(state, 'connecting', at);
    case 'InstanceQrIssued':
      return enter(state, 'qr', at);
    case 'InstanceQrExpired':
      return enter(state, state.linkedNumber ? 'disconnected' : 'created', at);
    case 'InstanceLinked':
      // A restriction is the linked account's (see InstanceLoggedOut): one of another number says nothing of this one.
      return { ...state, linkedNumber: event.data.number, restriction: event.data.number === state.linkedNumber ? state.restriction : null };
    case 'InstanceConnected':
      return enter(state, 'connected', at);
    case 'InstanceDisconnected':
      // Before any link there is nothing to reconnect: back to created (get_qrcode starts over), with the reason.
      return enter(state, state.linkedNumber ? 'disconnected' : 'created', at, { lastDisconnectReason: event.data.reason });
    case 'InstanceLoggedOut':
      // The device is unlinked, and with it the account whose sends WhatsApp restricted: the restriction ends, so the
      // next link's sends are not held by it. Also when the same number links again: whether its restriction still
      // holds then (it may be days later) is not known, and WhatsApp answers the first send with 463 again if it does,
      // which records it anew; holding that link's sends on the old record could hold them for nothing.
      return enter(state, 'logged_out', at, { linkedNumber: null, lastDisconnectReason: event.data.reason, restriction: null });
    case 'InstanceFailed':
      return enter(state, 'failed', at, { lastDisconnectReason: event.data.reason });
    case 'InstanceRestricted':
      // A new end for a restriction that holds keeps when it began.
      return { ...state, restriction: { since: activeRestriction(state, Date.parse(at))?.since ?? at, until: event.data.until } };
    case 'InstanceRestrictionLifted':
      return { ...state, restriction: null };
    case 'InstanceDataErased':
      return { ...state, dataErasedAt: at };
    case 'InstanceDataAlreadyErased':
      // Nothing was erased: `data_erased_at` stays the latest erasure's.
      return state;
    default:
      return ignoreUnknown(event, state);
  }
};

/** An event type this version does not know (written by a newer service) leaves the state as it is. */
const ignoreUnknown = (_event: never, state: InstanceState): InstanceState => state;

/** Stored events as current ones. Every event type is at schema version 1, so nothing needs converting yet. */
export const upcastInstanceEvent = (event: RecordedEvent): InstanceEvent => asCurrentEvent<InstanceEvent>(event);

export const instanceDecider: Decider<InstanceCommand, InstanceEvent, InstanceState> = {
  decide: decideInstance,
  evolve: evolveInstance,
  initialState: initialInstanceState,
  upcast: upcastInstanceEvent,
};
