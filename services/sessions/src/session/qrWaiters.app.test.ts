import { InMemoryEventStore, instanceEvent, instanceStream, isAppError } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import type { Connection, ConnectionEvent, Connector } from '../connector/port';
import { InboundRefStore } from '../inbound/inboundRefs';
import { InstanceRegistry } from '../registry/instanceRegistry';
import { FactWriter } from './factWriter';
import { SessionManager } from './sessionManager';
import type { Leases } from './sessionOptions';

// get_qrcode waits up to QR_WAIT_MS for a QR code; it answers at once when none can come: a linked instance whose
// connection is down and coming back logs in with its stored link (waiting, then 503 qr_timeout, told the user to try
// again, forever), and a session stopped here (its lease lost to another replica, a shutdown) shows none any more.

const NUMBER = '4915112345678';

/** Connections that report only what the test emits (no QR code: a linked instance logs in). */
class ScriptedConnector implements Connector {
  readonly name = 'scripted';
  private readonly listeners = new Map<string, (event: ConnectionEvent) => void>();

  async connect(instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection> {
    this.listeners.set(instanceId, onEvent);
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

  emit(instanceId: string, event: ConnectionEvent): void {
    this.listeners.get(instanceId)?.(event);
  }

  downloadMedia = async (): Promise<never> => Promise.reject(new Error('not scripted'));
  purge = async (): Promise<void> => undefined;
  forgetContent = async (): Promise<void> => undefined;
}

let loseLease: (instanceId: string) => void = () => undefined;
const leases: Leases = {
  acquire: async () => true,
  release: async () => undefined,
  owns: () => true,
  isFree: () => false,
  onLost: (listener) => {
    loseLease = listener;
  },
  onFreed: () => undefined,
  stop: async () => undefined,
};

describe('SessionManager: get_qrcode when no QR code can come (application, in-memory store)', () => {
  const store = new InMemoryEventStore();
  const registry = new InstanceRegistry(store, testLogger());
  const connector = new ScriptedConnector();
  const facts = new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger());
  const sessions = new SessionManager(connector, facts, registry, leases, testLogger(), { autoMarkRead: false, restrictedPauseMs: 60_000 }, () => 0);
  const id = 'LINKED1';

  beforeAll(async () => {
    registry.start();
    const now = new Date().toISOString();
    await store.append(
      instanceStream(id),
      [instanceEvent('InstanceCreated', now, { instance_id: id, account: 'acme' }), instanceEvent('InstanceLinked', now, { number: NUMBER })],
      { expectedVersion: 0, commandId: `c-${id}` },
    );
    await eventually(
      async () => registry.get(id)?.linkedNumber,
      (linked) => linked === NUMBER,
    );
  });
  afterAll(async () => {
    await sessions.closeAll();
    await registry.stop();
  });

  it('answers 409 already_linked at once while its connection is down and coming back, not 503 qr_timeout after the wait', async () => {
    await sessions.reconnect(id);
    connector.emit(id, { type: 'disconnected', reason: 'connection lost' });
    const started = Date.now();
    const error = await sessions.getQr(id, 3_000).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAppError(error) && [error.kind, error.code]).toEqual(['conflict', 'already_linked']);
    expect(String((error as Error).message)).toMatch(/reset_instance/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('answers a get_qrcode waiting on a session stopped here (its lease lost) at once, not at its deadline', async () => {
    const unlinked = 'UNLINKED1';
    await store.append(instanceStream(unlinked), [instanceEvent('InstanceCreated', new Date().toISOString(), { instance_id: unlinked, account: 'acme' })], {
      expectedVersion: 0,
      commandId: `c-${unlinked}`,
    });
    await eventually(
      async () => registry.get(unlinked),
      (known) => known !== undefined,
    );
    const started = Date.now();
    const waiting = sessions.getQr(unlinked, 3_000).then(
      () => null,
      (e: unknown) => e,
    );
    // Its connection is open and shows no QR code yet.
    await new Promise((resolve) => setTimeout(resolve, 50));
    loseLease(unlinked);
    const error = await waiting;
    expect(isAppError(error) && error.kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
