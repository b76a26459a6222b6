import {
  connectNats,
  instanceDecider,
  instanceEvent,
  instanceStream,
  JetStreamEventStore,
  LeaseStore,
  loadAggregate,
  Ownership,
  type ExistingInstance,
  type NatsHandle,
} from '@wagw/lib';
import { startTestNats, type TestNats } from '../../../../test/harness/natsServer';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { SandboxPlatform } from '../connector/sandbox';
import { InboundRefStore } from '../inbound/inboundRefs';
import { InstanceRegistry } from '../registry/instanceRegistry';
import { FactWriter } from './factWriter';
import { SessionManager } from './sessionManager';

const NUMBER = '4915112345678';
const NOW = () => new Date().toISOString();

/**
 * Connection supervision on a real nats-server: the session manager, its registry, the sandbox platform and the lease,
 * wired as the sessions service wires them; what it recorded is read back from the instance's stream.
 */
describe('session manager (real nats-server, sandbox platform)', () => {
  let server: TestNats;
  let nats: NatsHandle;
  let store: JetStreamEventStore;
  let registry: InstanceRegistry;
  let ownership: Ownership;
  let platform: SandboxPlatform;
  let sessions: SessionManager;
  let n = 0;

  beforeAll(async () => {
    server = await startTestNats();
    nats = await connectNats({ url: server.url, name: 'session-manager-test', logger: testLogger() });
    store = await JetStreamEventStore.open(nats, { logger: testLogger() });
  });
  afterAll(async () => {
    await nats.close();
    await server.dispose();
  });
  /**
   * One sessions replica as the service wires it; a lease renewed less often than its TTL can be lost. A replica
   * replacing one that died shares its leases and platform (which keeps the links, as WhatsApp does).
   */
  const wire = async (renewEveryMs = 1_000, after?: { bucket: string; platform: SandboxPlatform }): Promise<void> => {
    registry = new InstanceRegistry(store, testLogger());
    registry.start();
    ownership = new Ownership(
      await LeaseStore.open(nats, after?.bucket ?? `test_leases_${++n}`),
      { replicaId: 'r1', ttlMs: 5_000, renewEveryMs },
      testLogger(),
    );
    await ownership.start();
    platform = after?.platform ?? new SandboxPlatform({ qrIntervalMs: 60_000, sentDelayMs: 5, deliveredDelayMs: 10, readDelayMs: 15 });
    sessions = new SessionManager(
      platform,
      new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger()),
      registry,
      ownership,
      testLogger(),
      undefined,
      () => 0,
    );
  };
  afterEach(async () => {
    await sessions.closeAll();
    await registry.stop();
  });

  const create = async (): Promise<string> => {
    const id = `SM${Date.now()}${n}`;
    await store.append(instanceStream(id), [instanceEvent('InstanceCreated', NOW(), { instance_id: id, account: 'acme' })], {
      expectedVersion: 0,
      commandId: `c-${id}`,
    });
    await registry.reach(id, 5_000);
    return id;
  };
  const instance = async (id: string): Promise<ExistingInstance> => (await loadAggregate(store, instanceDecider, instanceStream(id))).state as ExistingInstance;
  const types = async (id: string): Promise<string[]> => (await store.readStream(instanceStream(id))).flatMap((c) => c.events.map((e) => e.type));

  it('starts a connection for a QR code, and records the scan as linked and connected', async () => {
    await wire();
    const id = await create();
    expect(await ownership.acquire(id)).toBe(true);
    const qr = await sessions.getQr(id, 5_000);
    expect(qr.length).toBeGreaterThan(20);
    await platform.scan(id, NUMBER);
    const connected = await eventually(
      () => instance(id),
      (s) => s.lifecycle === 'connected',
    );
    expect(connected.linkedNumber).toBe(NUMBER);
    expect(await types(id)).toEqual(['InstanceCreated', 'InstanceConnecting', 'InstanceQrIssued', 'InstanceLinked', 'InstanceConnected']);
    expect(sessions.connected(id)).not.toBeNull();
    await expect(sessions.getQr(id, 1_000)).rejects.toMatchObject({ code: 'already_connected' });
  });

  it('keeps an instance reset when the connection it ended reports "connected" late (the reset wins the race)', async () => {
    await wire();
    const id = await create();
    expect(await ownership.acquire(id)).toBe(true);
    await sessions.getQr(id, 5_000);
    // The reset is stored (by the instances service) but has not reached this replica's registry yet when the phone
    // scans the old QR code: the stopped registry holds that moment still.
    await eventually(
      () => instance(id),
      (s) => s.lifecycle === 'qr',
    );
    await registry.stop();
    await store.append(instanceStream(id), [instanceEvent('InstanceReset', NOW(), {})], { expectedVersion: 'any', commandId: `r-${id}` });
    await platform.scan(id, NUMBER);
    expect(
      await eventually(
        () => Promise.resolve(sessions.connected(id)),
        (c) => c !== null,
      ),
    ).not.toBeNull();
    await sessions.closeAll(); // waits for the recorded facts
    expect(await instance(id)).toMatchObject({ lifecycle: 'created', linkedNumber: null, resets: 1 });
    expect(await types(id)).toEqual(['InstanceCreated', 'InstanceConnecting', 'InstanceQrIssued', 'InstanceReset']);
  });

  it('stops the connection at once when another replica takes the lease over', async () => {
    await wire(60_000); // never renewed within the test: the 5 s lease expires and r2 takes it
    const id = await create();
    expect(await ownership.acquire(id)).toBe(true);
    await sessions.getQr(id, 5_000);
    await platform.scan(id, NUMBER);
    await eventually(
      () => instance(id),
      (s) => s.lifecycle === 'connected',
    );
    const other = new Ownership(await LeaseStore.open(nats, `test_leases_${n}`), { replicaId: 'r2', ttlMs: 5_000, renewEveryMs: 1_000 }, testLogger());
    await other.start();
    try {
      expect(
        await eventually(
          () => other.acquire(id),
          (taken) => taken,
          8_000,
          200,
        ),
      ).toBe(true);
      expect(
        await eventually(
          () => Promise.resolve(sessions.size),
          (size) => size === 0,
        ),
      ).toBe(0);
      expect(sessions.connected(id)).toBeNull();
    } finally {
      await other.stop();
    }
  });

  describe('a reset made while the replica holding the instance was dead (its lease not run out yet)', () => {
    /** A linked instance whose replica died (its lease, 1.5 s here, renewed no more), reset then; this replica runs. */
    const resetWhileHolderDead = async (): Promise<string> => {
      await wire();
      const id = await create();
      expect(await ownership.acquire(id)).toBe(true);
      await sessions.getQr(id, 5_000);
      await platform.scan(id, NUMBER);
      await eventually(
        () => instance(id),
        (s) => s.lifecycle === 'connected',
      );
      await sessions.closeAll();
      await registry.stop();
      const bucket = `test_leases_${n}`;
      await (await LeaseStore.open(nats, bucket)).tryAcquire(id, 'dead-replica', 1_500);
      await wire(1_000, { bucket, platform });
      await store.append(instanceStream(id), [instanceEvent('InstanceReset', NOW(), {})], { expectedVersion: 'any', commandId: `r-${id}` });
      await registry.reach(id, 5_000);
      return id;
    };

    it('wipes the link once the lease has run out, nothing asked', async () => {
      const id = await resetWhileHolderDead();
      sessions.startClaiming(100);
      expect(await platform.linkedNumber(id)).toBe(NUMBER);
      expect(
        await eventually(
          () => platform.linkedNumber(id),
          (number) => number === null,
          5_000,
        ),
      ).toBeNull();
    });

    it('shows a QR code to the first get_qrcode after the lease has run out, not the old link connected', async () => {
      const id = await resetWhileHolderDead();
      await eventually(
        () => ownership.acquire(id),
        (taken) => taken,
        5_000,
        100,
      );
      const qr = await sessions.getQr(id, 5_000);
      expect(qr.length).toBeGreaterThan(20);
      expect(await platform.linkedNumber(id)).toBeNull();
      expect(await instance(id)).toMatchObject({ linkedNumber: null });
    });
  });
});
