import { InMemoryEventStore, instanceEvent, instanceStream, type InstanceEvent } from '@wagw/lib';
import { LikeBaileys } from '../../../../test/harness/likeBaileysConnector';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { InboundRefStore } from '../inbound/inboundRefs';
import { InstanceRegistry } from '../registry/instanceRegistry';
import { FactWriter } from './factWriter';
import { SessionManager } from './sessionManager';
import type { Leases } from './sessionOptions';

// Application tests of the session manager's connection lifecycle when requests meet: a reconnect, a reset, a lost
// lease or a get_qrcode while a connection is still being opened or logged out. The real manager, fact writer and
// registry on an in-memory store; a connector that behaves as the Baileys one does where it matters (LikeBaileys).

const NUMBER = '4915112345678';

describe('SessionManager: connections opened, stopped and reset at once (application, in-memory store)', () => {
  let store: InMemoryEventStore;
  let registry: InstanceRegistry;
  let connector: LikeBaileys;
  let sessions: SessionManager;
  let lost: (key: string) => void = () => undefined;
  /** Whether this replica holds the instance's lease (the only replica: free otherwise). */
  let held = false;
  let n = 0;
  let id = '';

  const leases: Leases = {
    acquire: async () => {
      held = true;
      return true;
    },
    release: async () => {
      held = false;
    },
    owns: () => held,
    ownedKeys: () => (held ? [id] : []),
    isFree: () => !held,
    onLost: (listener) => {
      lost = listener;
    },
    onFreed: () => undefined,
    stop: async () => {
      held = false;
    },
  };

  beforeEach(async () => {
    store = new InMemoryEventStore();
    registry = new InstanceRegistry(store, testLogger());
    registry.start();
    connector = new LikeBaileys();
    sessions = new SessionManager(
      connector,
      new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger()),
      registry,
      leases,
      testLogger(),
      undefined,
      () => 0,
    );
    id = `LIFE${++n}`;
  });
  afterEach(async () => {
    connector.connecting.open();
    connector.loggingOut.open();
    await sessions.closeAll();
    await registry.stop();
  });

  const append = (events: InstanceEvent[]): Promise<unknown> =>
    store.append(instanceStream(id), events, { expectedVersion: 'any', commandId: `c-${id}-${events[0]!.type}` });
  const created = async (): Promise<void> => {
    await append([instanceEvent('InstanceCreated', new Date().toISOString(), { instance_id: id, account: 'acme' })]);
    await registry.reach(id, 5_000);
  };
  const linked = async (): Promise<void> => {
    await created();
    await append([
      instanceEvent('InstanceLinked', new Date().toISOString(), { number: NUMBER }),
      instanceEvent('InstanceConnected', new Date().toISOString(), {}),
    ]);
    await eventually(
      async () => registry.get(id)?.linkedNumber,
      (number) => number === NUMBER,
    );
  };
  const reset = (): Promise<unknown> => append([instanceEvent('InstanceReset', new Date().toISOString(), {})]);
  /** The owner router takes the free lease before it calls in (`OwnerRouter`). */
  const routed = async <T>(call: () => Promise<T>): Promise<T> => {
    await leases.acquire(id);
    return call();
  };
  /** A reconnect whose connect() is held at its gate (wrapped: an async function returning a promise would await it). */
  const reconnectHeld = async (): Promise<{ reconnecting: Promise<void> }> => {
    connector.connecting.held = true;
    const waiting = connector.connecting.count;
    const reconnecting = routed(() => sessions.reconnect(id));
    await eventually(
      async () => connector.connecting.count,
      (count) => count === waiting + 1,
    );
    return { reconnecting };
  };
  const settled = async (work: Promise<unknown>): Promise<void> => {
    await work.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
  };

  describe('a connection stopped while it is being opened', () => {
    beforeEach(linked);

    it('is closed once it opens when the lease was lost meanwhile (another replica runs the instance)', async () => {
      const { reconnecting } = await reconnectHeld();
      held = false;
      lost(id);
      connector.connecting.open();
      await settled(reconnecting);
      expect(sessions.size).toBe(0);
      expect(connector.live()).toEqual([]);
    });

    it('is closed once it opens when the instance was reset meanwhile', async () => {
      const { reconnecting } = await reconnectHeld();
      await reset();
      await eventually(
        async () => held,
        (h) => !h,
      );
      connector.connecting.open();
      await settled(reconnecting);
      expect(connector.live()).toEqual([]);
      expect(sessions.size).toBe(0);
    });

    it('leaves one connection running after two reconnects asked at once', async () => {
      const { reconnecting: first } = await reconnectHeld();
      const { reconnecting: second } = await reconnectHeld();
      connector.connecting.open();
      await Promise.all([first, second]);
      expect(connector.live()).toHaveLength(1);
      expect(sessions.size).toBe(1);
    });
  });

  describe('get_qrcode right after reset_instance (linking the instance again)', () => {
    beforeEach(linked);

    it('shows a QR code of a connection that stays open, under the lease, once the reset has logged out', async () => {
      await routed(() => sessions.reconnect(id));
      connector.loggingOut.held = true;
      await reset();
      await eventually(
        async () => connector.loggingOut.count,
        (count) => count === 1,
      );
      // The user asks for the QR code while the reset is still logging the device out.
      const asked = routed(() => sessions.getQr(id, 2_000));
      await new Promise((resolve) => setTimeout(resolve, 20));
      connector.loggingOut.open();
      const first = await asked;
      const again = await routed(() => sessions.getQr(id, 1_000));
      expect(again).toBe(first);
      expect(connector.live().map((c) => c.qr)).toEqual([first]);
      expect(held).toBe(true);
    });

    it('answers two get_qrcode asked at once during the logout with the QR code of one connection', async () => {
      await routed(() => sessions.reconnect(id));
      connector.loggingOut.held = true;
      await reset();
      await eventually(
        async () => connector.loggingOut.count,
        (count) => count === 1,
      );
      const asked = [routed(() => sessions.getQr(id, 2_000)), routed(() => sessions.getQr(id, 2_000))];
      await new Promise((resolve) => setTimeout(resolve, 20));
      connector.loggingOut.open();
      const [first, second] = await Promise.all(asked);
      expect(second).toBe(first);
      expect(connector.live().map((c) => c.qr)).toEqual([first]);
    });
  });

  it('answers two get_qrcode asked at once (a page polling, a pairing code beside it) with the QR code of one connection', async () => {
    await created();
    const [first, second] = await Promise.all([routed(() => sessions.getQr(id, 1_000)), routed(() => sessions.getQr(id, 1_000))]);
    expect(second).toBe(first);
    expect(connector.opened).toHaveLength(1);
  });

  describe('the lease of an instance nothing runs for', () => {
    it('is given up when a reconnect fails to connect, so the claim sweep connects the instance once the platform is back', async () => {
      await linked();
      await routed(() => sessions.reconnect(id));
      connector.unreachable = true;
      await expect(routed(() => sessions.reconnect(id))).rejects.toThrow('the platform cannot be reached');
      expect(held).toBe(false);
      connector.unreachable = false;
      sessions.startClaiming(20);
      expect(
        await eventually(
          async () => connector.live().length,
          (count) => count === 1,
        ),
      ).toBe(1);
      expect(held).toBe(true);
    });

    it('is given up when get_qrcode cannot open a connection', async () => {
      await created();
      connector.unreachable = true;
      await expect(routed(() => sessions.getQr(id, 1_000))).rejects.toThrow('the platform cannot be reached');
      expect(held).toBe(false);
    });

    it('is given up when a reconnect is refused as the instance is not linked (never linked, or reset)', async () => {
      await created();
      await expect(routed(() => sessions.reconnect(id))).rejects.toMatchObject({ code: 'not_linked' });
      expect(held).toBe(false);
    });

    it('is kept when a reconnect is refused while a QR code is being shown', async () => {
      await created();
      await routed(() => sessions.getQr(id, 1_000));
      await expect(routed(() => sessions.reconnect(id))).rejects.toMatchObject({ code: 'not_linked' });
      expect(held).toBe(true);
      expect(connector.live()).toHaveLength(1);
    });
  });
});
