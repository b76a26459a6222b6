import { InMemoryEventStore, instanceEvent, instanceStream, isAppError } from '@wagw/lib';
import { registryWithLinked } from '../../../../test/harness/linkedRegistry';
import { testLogger } from '../../../../test/harness/logger';
import { ScriptedConnector } from '../../../../test/harness/scriptedConnector';
import { eventually } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { ACCOUNT_RESTRICTED, type ConnectionEvent } from '../connector/port';
import { InboundRefStore } from '../inbound/inboundRefs';
import { type InstanceRegistry } from '../registry/instanceRegistry';
import { FactWriter } from './factWriter';
import { SessionManager } from './sessionManager';
import type { Leases } from './sessionOptions';

// Application tests of restrictions in the session manager: the real manager, fact writer and registry on an in-memory
// store, a connector that reports what each test says when it says it (as an adapter would, in any order the platform
// and the adapter's own lookups make), and the dispatcher's part played by hand: `sending`, then the send.

const NUMBER = '4915112345678';
const TO = '4915199999999';
const HOUR = 3_600_000;

/** This replica holds every lease (until a test says it lost one, or marks it lost before anything ran on it). */
let loseLease: (instanceId: string) => void = () => undefined;
const notHeld = new Set<string>();
const leases: Leases = {
  acquire: async () => true,
  release: async () => undefined,
  owns: (instanceId) => !notHeld.has(instanceId),
  ownedKeys: () => [],
  isFree: () => false,
  onLost: (listener) => {
    loseLease = listener;
  },
  onFreed: () => undefined,
  stop: async () => undefined,
};

describe('SessionManager: a send the platform took ends a restriction (application, in-memory store)', () => {
  let store: InMemoryEventStore;
  let registry: InstanceRegistry;
  let facts: FactWriter;
  let connector: ScriptedConnector;
  let sessions: SessionManager;
  let n = 0;
  let id = '';

  beforeEach(async () => {
    store = new InMemoryEventStore();
    id = `RESTRICT${++n}`;
    registry = await registryWithLinked(store, id, { number: NUMBER, then: [instanceEvent('InstanceConnected', new Date().toISOString(), {})] });
    facts = new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger());
    connector = new ScriptedConnector();
    sessions = newManager();
    await connect();
  });
  afterEach(async () => {
    await sessions.closeAll();
    await registry.stop();
  });

  const newManager = (): SessionManager =>
    new SessionManager(connector, facts, registry, leases, testLogger(), { autoMarkRead: false, restrictedPauseMs: HOUR }, () => 0);
  /** The platform refuses a send: the connection reports the restriction, then the send's receipt. */
  const refusedWithRestriction = async (messageId: string): Promise<void> => {
    await send(messageId);
    emit({ type: 'restricted', until: null });
    emit(refused(messageId));
  };
  /** A new connection of the instance, connected: it has heard nothing of a restriction yet. */
  const connect = async (): Promise<void> => {
    await sessions.reconnect(id);
    emit({ type: 'connected', number: NUMBER });
  };
  const emit = (event: ConnectionEvent): void => connector.emit(id, event);
  /** What the dispatcher does with a send: says it is handed over, then hands it over (the platform is scripted). */
  const send = async (messageId: string): Promise<void> => {
    sessions.sending(id, messageId, TO);
    await sessions.connected(id)?.send({ messageId, to: TO, text: 'hi' });
  };
  const taken = (messageId: string): ConnectionEvent => ({ type: 'receipt', messageId, status: 'sent' });
  const refused = (messageId: string): ConnectionEvent => ({ type: 'receipt', messageId, status: 'failed', reason: ACCOUNT_RESTRICTED });
  /** The instance's events once every fact reported so far is recorded. */
  const recorded = async (): Promise<string[]> => {
    await facts.idle();
    return (await store.readStream(instanceStream(id))).flatMap((c) => c.events.map((e) => e.type));
  };
  const restrictionEvents = async (): Promise<string[]> => (await recorded()).filter((type) => type.startsWith('InstanceRestrict'));

  it('ends a restriction the connection reported when a send handed over after the report is taken', async () => {
    await refusedWithRestriction('refused');
    expect(sessions.sendsPaused(id)).toBe(true);
    expect(await restrictionEvents()).toEqual(['InstanceRestricted']);

    await send('probe');
    expect(sessions.sendsPaused(id)).toBe(true);
    emit(taken('probe'));
    // At once, before the fact is stored: queued sends go out again.
    expect(sessions.sendsPaused(id)).toBe(false);
    expect(await restrictionEvents()).toEqual(['InstanceRestricted', 'InstanceRestrictionLifted']);
    expect(registry.stateOf(id)?.restriction).toBeNull();
    // Restricted again: the next refusal pauses sends again, and the next probe taken ends it again.
    emit({ type: 'restricted', until: null });
    expect(sessions.sendsPaused(id)).toBe(true);
    await send('probe-2');
    emit(taken('probe-2'));
    expect(sessions.sendsPaused(id)).toBe(false);
    expect(await restrictionEvents()).toEqual(['InstanceRestricted', 'InstanceRestrictionLifted', 'InstanceRestricted', 'InstanceRestrictionLifted']);
  });

  it('ends nothing with a send handed over before the report, though its receipt comes after it (taken before the refusal)', async () => {
    await send('taken-before');
    await send('refused');
    // The platform took the first and refused the second; the adapter reports the restriction at once and the
    // receipts once it has mapped their ids back (Baileys), or after a delay (the sandbox).
    emit({ type: 'restricted', until: null });
    emit(taken('taken-before'));
    emit(refused('refused'));
    expect(sessions.sendsPaused(id)).toBe(true);
    expect(await restrictionEvents()).toEqual(['InstanceRestricted']);
    // A refused send is no end either, probe or not.
    await refusedWithRestriction('refused-probe');
    expect(sessions.sendsPaused(id)).toBe(true);
    await send('probe');
    emit(taken('probe'));
    expect(sessions.sendsPaused(id)).toBe(false);
    expect(await restrictionEvents()).toEqual(['InstanceRestricted', 'InstanceRestrictionLifted']);
  });

  it('ends a restriction an earlier connection recorded when a send handed over while the log shows it is taken', async () => {
    await send('in-flight');
    await refusedWithRestriction('refused');
    await eventually(
      async () => registry.stateOf(id)?.restriction,
      (restriction) => restriction != null,
    );
    // A new connection has heard nothing: the log's restriction holds its sends.
    await connect();
    expect(sessions.sendsPaused(id)).toBe(true);
    // The earlier connection's send, reported on this one (the sandbox carries receipts over): handed over before the
    // restriction was reported, it ends nothing.
    emit(taken('in-flight'));
    expect(sessions.sendsPaused(id)).toBe(true);
    expect(await restrictionEvents()).toEqual(['InstanceRestricted']);
    await send('probe');
    emit(taken('probe'));
    expect(sessions.sendsPaused(id)).toBe(false);
    expect(await restrictionEvents()).toEqual(['InstanceRestricted', 'InstanceRestrictionLifted']);
    await eventually(
      async () => registry.stateOf(id)?.restriction,
      (restriction) => restriction === null,
    );
  });

  it('ends, on the replica that took the instance over, a restriction the log shows, at the first send it takes', async () => {
    await refusedWithRestriction('refused');
    await eventually(
      async () => registry.stateOf(id)?.restriction,
      (restriction) => restriction != null,
    );
    // This replica dies; another, which has heard nothing of the instance, holds it now.
    await sessions.closeAll();
    sessions = newManager();
    await connect();
    expect(sessions.sendsPaused(id)).toBe(true);
    await send('first-here');
    emit(taken('first-here'));
    expect(sessions.sendsPaused(id)).toBe(false);
    expect(await restrictionEvents()).toEqual(['InstanceRestricted', 'InstanceRestrictionLifted']);
  });

  it('records no lifting for a send taken after the platform lifted the restriction, or after its end', async () => {
    await send('refused');
    emit({ type: 'restricted', until: null });
    emit({ type: 'unrestricted' });
    expect(sessions.sendsPaused(id)).toBe(false);
    await send('after-lifting');
    emit(taken('after-lifting'));
    expect(await restrictionEvents()).toEqual(['InstanceRestricted', 'InstanceRestrictionLifted']);

    const until = Date.now() + 100;
    emit({ type: 'restricted', until: new Date(until).toISOString() });
    expect(sessions.sendsPaused(id)).toBe(true);
    await eventually(
      async () => sessions.sendsPaused(id),
      (paused) => !paused,
    );
    await send('after-end');
    emit(taken('after-end'));
    // Over by its end: the log shows it no longer, and a lifting is recorded only while one holds.
    expect(await restrictionEvents()).toEqual(['InstanceRestricted', 'InstanceRestrictionLifted', 'InstanceRestricted']);
    expect(sessions.sendsPaused(id)).toBe(false);
  });
});

// get_qrcode waits up to QR_WAIT_MS for a QR code; it answers at once when none can come: a linked instance whose
// connection is down and coming back logs in with its stored link (waiting, then 503 qr_timeout, told the user to try
// again, forever), and a session stopped here (its lease lost to another replica, a shutdown) shows none any more.

describe('SessionManager: get_qrcode when no QR code can come (application, in-memory store)', () => {
  const store = new InMemoryEventStore();
  let registry: InstanceRegistry;
  const connector = new ScriptedConnector();
  const facts = new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger());
  let sessions: SessionManager;
  const id = 'LINKED1';

  beforeAll(async () => {
    registry = await registryWithLinked(store, id, { number: NUMBER });
    // Made here, the last manager made: the one `loseLease` speaks to.
    sessions = new SessionManager(connector, facts, registry, leases, testLogger(), { autoMarkRead: false, restrictedPauseMs: 60_000 }, () => 0);
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

  /** A created instance, not linked yet, known to the registry. */
  const givenCreated = async (instanceId: string): Promise<void> => {
    await store.append(instanceStream(instanceId), [instanceEvent('InstanceCreated', new Date().toISOString(), { instance_id: instanceId, account: 'acme' })], {
      expectedVersion: 0,
      commandId: `c-${instanceId}`,
    });
    await eventually(
      async () => registry.get(instanceId),
      (known) => known !== undefined,
    );
  };

  it('answers a get_qrcode waiting on a session stopped here (its lease lost) at once, not at its deadline', async () => {
    const unlinked = 'UNLINKED1';
    await givenCreated(unlinked);
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

  it('starts no connection for an instance whose lease was lost between its taking and the start (it would run unleased)', async () => {
    const lostFirst = 'UNLINKED2';
    await givenCreated(lostFirst);
    notHeld.add(lostFirst);
    const connects = connector.connects;
    const error = await sessions.getQr(lostFirst, 3_000).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAppError(error) && [error.kind, error.code]).toEqual(['unavailable', 'owner_changed']);
    expect(connector.connects).toBe(connects);
  });
});

describe('SessionManager: a reconnect that comes due after the lease went (application, in-memory store)', () => {
  it('ends the session instead of leaving it connecting for good, so the instance is idle for a claim again', async () => {
    const store = new InMemoryEventStore();
    const id = 'LINKED2';
    const registry = await registryWithLinked(store, id, { number: NUMBER });
    const connector = new ScriptedConnector();
    const facts = new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger());
    const sessions = new SessionManager(connector, facts, registry, leases, testLogger(), { autoMarkRead: false, restrictedPauseMs: 60_000 }, () => 1);
    try {
      await sessions.reconnect(id);
      connector.emit(id, { type: 'connected', number: NUMBER });
      connector.emit(id, { type: 'disconnected', reason: 'connection lost' });
      // The reconnect is scheduled (1.3 s away: the longest first delay, room for a loaded machine) while the lease is
      // still here; it goes before the reconnect is due.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(sessions.size).toBe(1);
      notHeld.add(id);
      expect(
        await eventually(
          async () => sessions.size,
          (size) => size === 0,
          3_000,
        ),
      ).toBe(0);
      expect(connector.connects).toBe(1);
    } finally {
      await sessions.closeAll();
      await registry.stop();
    }
  });
});
