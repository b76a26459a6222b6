import { InMemoryEventStore } from '@wagw/lib';
import { registryWithLinked } from '../../../../test/harness/linkedRegistry';
import { testLogger } from '../../../../test/harness/logger';
import { ScriptedConnector } from '../../../../test/harness/scriptedConnector';
import { eventually, sleep } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { InboundRefStore } from '../inbound/inboundRefs';
import { FactWriter } from './factWriter';
import { SessionManager } from './sessionManager';
import type { Leases } from './sessionOptions';

// A lease this replica holds with nothing running under it is renewed for good: no replica takes its instance again
// (a compose drill's instance sent nothing for a minute after a take-over failed half-way and kept its lease). Given
// a linked instance whose lease is held here with no connection, when the unheld sweep runs, then the lease is given
// back, the next sweep takes the instance over and connects it, and a lease with a connection under it stays; nor is
// it given back while a reconnect waits for the old connection to close.

const ID = 'UNUSED1';

const withManager = async (
  run: (parts: { sessions: SessionManager; connector: ScriptedConnector; released: string[]; held: Set<string> }) => Promise<void>,
): Promise<void> => {
  const store = new InMemoryEventStore();
  const registry = await registryWithLinked(store, ID);
  const held = new Set([ID]);
  const released: string[] = [];
  const leases: Leases = {
    acquire: async (id) => {
      held.add(id);
      return true;
    },
    release: async (id) => {
      held.delete(id);
      released.push(id);
    },
    owns: (id) => held.has(id),
    ownedKeys: () => [...held],
    isFree: (id) => !held.has(id),
    onLost: () => undefined,
    onFreed: () => undefined,
    stop: async () => undefined,
  };
  const connector = new ScriptedConnector();
  const sessions = new SessionManager(
    connector,
    new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger()),
    registry,
    leases,
    testLogger(),
  );
  try {
    sessions.startClaiming(50);
    await eventually(
      async () => connector.connects,
      (n) => n === 1,
    );
    await run({ sessions, connector, released, held });
  } finally {
    await sessions.closeAll();
    await registry.stop();
  }
};

describe('SessionManager: a lease held with nothing running under it (application, in-memory store)', () => {
  it('is given back after a whole sweep, and the instance is taken over and connected; a running one keeps its lease', () =>
    withManager(async ({ connector, released, held }) => {
      expect(released).toEqual([ID]);
      // Its connection runs now: later sweeps leave the lease alone.
      await sleep(300);
      expect([released, connector.connects, held.has(ID)]).toEqual([[ID], 1, true]);
    }));

  it('is kept while a reconnect waits for the old connection to close (many sweeps long)', () =>
    withManager(async ({ sessions, connector, released, held }) => {
      connector.closeDelayMs = 400;
      await sessions.reconnect(ID);
      expect([released, connector.connects, held.has(ID)]).toEqual([[ID], 2, true]);
    }));
});
