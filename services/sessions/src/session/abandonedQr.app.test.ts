import { InMemoryEventStore, instanceEvent, instanceStream, type InstanceEvent } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import type { Connector } from '../connector/port';
import { InboundRefStore } from '../inbound/inboundRefs';
import { InstanceRegistry } from '../registry/instanceRegistry';
import { FactWriter } from './factWriter';
import { SessionManager } from './sessionManager';
import type { Leases } from './sessionOptions';

// Application test: an unlinked instance whose QR code was on the screen of a replica that died (SIGKILL: no
// shutdown recorded anything) is not left `qr` for good: the claim sweep of a live replica records the disconnect.

const unusedConnector: Connector = {
  name: 'unused',
  connect: async () => Promise.reject(new Error('no connection is started here')),
  downloadMedia: async () => Promise.reject(new Error('not scripted')),
  purge: async () => undefined,
  forgetContent: async () => undefined,
};

/** Leases where `held` instances are held by a live replica elsewhere; the others are free and taken on request. */
const leasesWith = (held: Set<string>): Leases & { taken: string[]; released: string[] } => {
  const taken: string[] = [];
  const released: string[] = [];
  return {
    taken,
    released,
    acquire: async (id) => {
      if (held.has(id)) return false;
      taken.push(id);
      return true;
    },
    release: async (id) => {
      released.push(id);
    },
    owns: (id) => taken.includes(id) && !released.includes(id),
    ownedKeys: () => taken.filter((id) => !released.includes(id)),
    isFree: (id) => !held.has(id) && !(taken.includes(id) && !released.includes(id)),
    onLost: () => undefined,
    onFreed: () => undefined,
    stop: async () => undefined,
  };
};

describe('SessionManager: an unlinked instance left showing a QR code by a replica that died (application, in-memory store)', () => {
  it('records it disconnected (replica_lost, not reconnecting) once its lease is free, and leaves alone the ones a live replica holds', async () => {
    const store = new InMemoryEventStore();
    const registry = new InstanceRegistry(store, testLogger());
    registry.start();
    const now = new Date().toISOString();
    const showingQr = (id: string): InstanceEvent[] => [
      instanceEvent('InstanceCreated', now, { instance_id: id, account: 'acme' }),
      instanceEvent('InstanceConnecting', now, {}),
      instanceEvent('InstanceQrIssued', now, {}),
    ];
    for (const id of ['ABANDONED', 'HELD']) await store.append(instanceStream(id), showingQr(id), { expectedVersion: 0, commandId: `c-${id}` });
    await store.append(instanceStream('CREATED'), [instanceEvent('InstanceCreated', now, { instance_id: 'CREATED', account: 'acme' })], {
      expectedVersion: 0,
      commandId: 'c-CREATED',
    });
    await registry.reach('CREATED', 5_000);
    await registry.reach('HELD', 5_000);
    await registry.reach('ABANDONED', 5_000);
    const leases = leasesWith(new Set(['HELD']));
    const sessions = new SessionManager(
      unusedConnector,
      new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger()),
      registry,
      leases,
      testLogger(),
    );

    sessions.startClaiming(50);
    expect(
      await eventually(
        async () => registry.stateOf('ABANDONED')?.lifecycle,
        (state) => state === 'created',
      ),
    ).toBe('created');
    const last = (await store.readStream(instanceStream('ABANDONED'))).flatMap((c) => c.events).at(-1);
    expect(last).toMatchObject({ type: 'InstanceDisconnected', data: { reason: 'replica_lost', reconnecting: false } });
    expect(leases.released).toEqual(['ABANDONED']);
    // A live replica still shows HELD's QR code; CREATED shows none.
    expect(registry.stateOf('HELD')?.lifecycle).toBe('qr');
    expect(leases.taken).toEqual(['ABANDONED']);
    // Once done, nothing more: no second disconnect on the next sweeps.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await store.readStream(instanceStream('ABANDONED'))).flatMap((c) => c.events).filter((e) => e.type === 'InstanceDisconnected')).toHaveLength(1);
    await sessions.closeAll();
    await registry.stop();
  });
});
