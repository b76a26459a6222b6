import { InMemoryEventStore, type AppendOptions, type AppendResult, type NewEvent } from '@wagw/lib';
import { everyLease } from '../../../../test/harness/everyLease';
import { registryWithLinked } from '../../../../test/harness/linkedRegistry';
import { testLogger } from '../../../../test/harness/logger';
import { ScriptedConnector } from '../../../../test/harness/scriptedConnector';
import { eventually, sleep } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { InboundRefStore } from '../inbound/inboundRefs';
import { type InstanceRegistry } from '../registry/instanceRegistry';
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

describe('SessionManager: a connection WhatsApp ends for good (application, in-memory store)', () => {
  let registry: InstanceRegistry;
  let sessions: SessionManager;
  afterEach(async () => {
    await sessions.closeAll();
    await registry.stop();
  });

  it('frees the lease only once the registry knows the instance failed', async () => {
    const store = new SlowStore();
    registry = await registryWithLinked(store, ID);
    const released: Array<string | null> = [];
    const leases = { ...everyLease, release: async () => void released.push(registry.get(ID)?.blockedReason ?? null) };
    const connector = new ScriptedConnector();
    sessions = new SessionManager(connector, new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger()), registry, leases, testLogger());
    await sessions.reconnect(ID);
    connector.emit(ID, { type: 'connected', number: '4915112345678' });
    await eventually(
      async () => sessions.connected(ID) !== null,
      (up) => up,
    );

    store.delayMs = 300;
    connector.emit(ID, { type: 'failed', reason: 'forbidden' });
    await eventually(
      async () => released.length,
      (n) => n > 0,
      5_000,
    );
    expect(released).toEqual(['forbidden']);
    expect(connector.connects).toBe(1);
  });
});
