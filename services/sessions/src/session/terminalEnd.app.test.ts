import { InMemoryEventStore, instanceEvent, instanceStream, type AppendOptions, type AppendResult, type NewEvent } from '@wagw/lib';
import { everyLease } from '../../../../test/harness/everyLease';
import { LikeBaileys } from '../../../../test/harness/likeBaileysConnector';
import { testLogger } from '../../../../test/harness/logger';
import { eventually, sleep } from '../../../../test/harness/wait';
import type { Connection, ConnectionEvent } from '../connector/port';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { InboundRefStore } from '../inbound/inboundRefs';
import { InstanceRegistry } from '../registry/instanceRegistry';
import { FactWriter } from './factWriter';
import { SessionManager } from './sessionManager';

// An instance WhatsApp refuses (403: `failed`) must not be connected again behind the user's back. Its lease used to
// be freed the moment the connection ended, while its `InstanceFailed` was still being appended: the claim of the
// freed lease read the registry, still "linked", and logged the account in again (seen on the emulator, under load).
// Given a linked, connected instance and a log that takes a while to store facts, when WhatsApp refuses it, then the
// lease goes only once the registry knows the instance failed.

const ID = 'TERMINAL1';

/** A log whose appends take `delayMs` (NATS slow under load). */
class SlowStore extends InMemoryEventStore {
  delayMs = 0;
  override async append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    if (this.delayMs > 0) await sleep(this.delayMs);
    return super.append(stream, events, options);
  }
}

/** One connection per connect(), reporting `connected`; the test reports what comes next through `report`. */
class ScriptedConnector extends LikeBaileys {
  opens = 0;
  report: (event: ConnectionEvent) => void = () => undefined;
  override async connect(_instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection> {
    this.opens++;
    this.report = onEvent;
    setImmediate(() => onEvent({ type: 'connected', number: '4915112345678' }));
    const none = async (): Promise<never> => Promise.reject(new Error('not scripted'));
    return {
      send: none,
      requestPairingCode: none,
      checkNumbers: none,
      listGroups: none,
      setTyping: none,
      markRead: none,
      logout: none,
      close: async () => undefined,
    };
  }
}

describe('SessionManager: a connection WhatsApp ends for good (application, in-memory store)', () => {
  let registry: InstanceRegistry;
  let sessions: SessionManager;
  afterEach(async () => {
    await sessions.closeAll();
    await registry.stop();
  });

  it('frees the lease only once the registry knows the instance failed', async () => {
    const store = new SlowStore();
    registry = new InstanceRegistry(store, testLogger());
    registry.start();
    const now = new Date().toISOString();
    await store.append(
      instanceStream(ID),
      [instanceEvent('InstanceCreated', now, { instance_id: ID, account: 'acme' }), instanceEvent('InstanceLinked', now, { number: '4915112345678' })],
      { expectedVersion: 0, commandId: 'linked' },
    );
    await eventually(
      async () => registry.isLinked(ID),
      (linked) => linked,
    );
    const released: Array<string | null> = [];
    const leases = { ...everyLease, release: async () => void released.push(registry.get(ID)?.blockedReason ?? null) };
    const connector = new ScriptedConnector();
    sessions = new SessionManager(connector, new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger()), registry, leases, testLogger());
    await sessions.reconnect(ID);
    await eventually(
      async () => sessions.connected(ID) !== null,
      (up) => up,
    );

    store.delayMs = 300;
    connector.report({ type: 'failed', reason: 'forbidden' });
    await eventually(
      async () => released.length,
      (n) => n > 0,
      5_000,
    );
    expect(released).toEqual(['forbidden']);
    expect(connector.opens).toBe(1);
  });
});
