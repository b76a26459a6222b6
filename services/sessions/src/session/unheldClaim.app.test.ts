import { instanceEvent, instanceStream, unavailable } from '@wagw/lib';
import { everyLease } from '../../../../test/harness/everyLease';
import { LaggingStore } from '../../../../test/harness/laggingStore';
import { registryWithLinked } from '../../../../test/harness/linkedRegistry';
import { testLogger } from '../../../../test/harness/logger';
import { ScriptedConnector } from '../../../../test/harness/scriptedConnector';
import { eventually, sleep } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { InboundRefStore } from '../inbound/inboundRefs';
import { type InstanceRegistry } from '../registry/instanceRegistry';
import { FactWriter } from './factWriter';
import { SessionManager } from './sessionManager';

// A freed lease of a linked instance is taken over (connected again from its stored link) by whichever replica claims
// it first. The registry that says "linked" may lag the log: the owner that freed the lease may just have recorded the
// instance logged out. Given a registry that has not folded the instance's last event yet, when its freed lease is
// claimed, then the claim waits for the registry to reach the log's end, and connects only what is still linked.

const ID = 'CLAIMED1';

describe('SessionManager: claiming a freed lease (application, in-memory store)', () => {
  let store: LaggingStore;
  let registry: InstanceRegistry;
  let sessions: SessionManager;
  let connector: ScriptedConnector;
  let claim: (instanceId: string) => void;
  let released: string[];

  beforeEach(async () => {
    store = new LaggingStore();
    registry = await registryWithLinked(store, ID);
    released = [];
    claim = () => undefined;
    const leases = {
      ...everyLease,
      release: async (instanceId: string) => void released.push(instanceId),
      onFreed: (listener: (instanceId: string) => void) => void (claim = listener),
    };
    connector = new ScriptedConnector();
    sessions = new SessionManager(connector, new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger()), registry, leases, testLogger());
  });

  afterEach(async () => {
    store.letGo();
    await sessions.closeAll();
    await registry.stop();
  });

  const logOut = async (): Promise<void> => {
    store.hold();
    const version = await store.version(instanceStream(ID));
    await store.append(instanceStream(ID), [instanceEvent('InstanceLoggedOut', new Date().toISOString(), { reason: 'logged_out' })], {
      expectedVersion: version,
      commandId: 'logged-out',
    });
    // The registry has not seen it: it still says linked, as a lagging replica's did.
    expect(registry.isLinked(ID)).toBe(true);
  };

  it('connects a freed linked instance whose registry is current', async () => {
    claim(ID);
    await eventually(
      async () => connector.connects,
      (n) => n === 1,
    );
    expect(released).toEqual([]);
  });

  it('does not connect an instance logged out in the log its registry had not folded yet, and gives the lease back', async () => {
    await logOut();
    claim(ID);
    await sleep(200);
    store.letGo();
    await eventually(
      async () => released,
      (r) => r.length > 0,
    );
    expect(registry.isLinked(ID)).toBe(false);
    expect(released).toEqual([ID]);
    expect(connector.connects).toBe(0);
  });

  it('gives the lease back without connecting when the registry cannot reach the log in time (2 s)', async () => {
    await logOut();
    claim(ID);
    await eventually(
      async () => released,
      (r) => r.length > 0,
      5_000,
    );
    expect(released).toEqual([ID]);
    expect(connector.connects).toBe(0);
  });

  it('gives the lease back when reaching the log fails (NATS electing a leader), and connects at the next claim', async () => {
    const version = store.version.bind(store);
    let failures = 1;
    store.version = async (stream) => {
      if (failures-- > 0) throw unavailable('event_store_unavailable', 'The event store (NATS) is unreachable: timeout');
      return version(stream);
    };
    claim(ID);
    await eventually(
      async () => released,
      (r) => r.length > 0,
    );
    // Kept, the lease would be renewed with nothing running under it, and no sweep would take the instance again.
    expect([released, connector.connects]).toEqual([[ID], 0]);
    claim(ID);
    await eventually(
      async () => connector.connects,
      (n) => n === 1,
    );
  });
});
