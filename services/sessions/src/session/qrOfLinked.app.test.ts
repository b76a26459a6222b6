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

// get_qrcode on a linked instance whose connection is down and coming back (reconnect backoff): a QR code never
// comes for it (it logs in with its stored link), so waiting QR_WAIT_MS for one and answering 503 qr_timeout told
// the user to try again, forever. It is answered at once: linked, reset_instance to link another phone.

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

const leases: Leases = {
  acquire: async () => true,
  release: async () => undefined,
  owns: () => true,
  isFree: () => false,
  onLost: () => undefined,
  onFreed: () => undefined,
  stop: async () => undefined,
};

describe('SessionManager: get_qrcode of a linked instance (application, in-memory store)', () => {
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
});
