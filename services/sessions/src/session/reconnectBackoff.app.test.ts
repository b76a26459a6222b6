import { InMemoryEventStore, instanceEvent } from '@wagw/lib';
import { LikeBaileys } from '../../../../test/harness/likeBaileysConnector';
import { registryWithLinked } from '../../../../test/harness/linkedRegistry';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { InboundRefStore } from '../inbound/inboundRefs';
import { type InstanceRegistry } from '../registry/instanceRegistry';
import { FactWriter } from './factWriter';
import { SessionManager } from './sessionManager';
import { everyLease } from '../../../../test/harness/everyLease';

// README "Sessions": a linked instance whose connection drops (428, 503, 500, ...) reconnects with backoff, 1 s
// doubling to 60 s. A hunt saw it retry about once a second for as long as WhatsApp stayed unreachable (35
// instance.disconnected webhooks in 35 s): each retry started a new session, whose attempt count began at 0.

const ID = 'BACKOFF1';
const NUMBER = '4915112345678';

describe('SessionManager: reconnects of a linked instance while the platform stays down (application, in-memory store)', () => {
  let registry: InstanceRegistry;
  let sessions: SessionManager;

  afterEach(async () => {
    await sessions.closeAll();
    await registry.stop();
  });

  it('waits longer before each attempt: 0.7 s, 1.4 s, 2.8 s (the lowest jitter), not 0.7 s every time', async () => {
    const store = new InMemoryEventStore();
    registry = await registryWithLinked(store, ID, { number: NUMBER, then: [instanceEvent('InstanceConnected', new Date().toISOString(), {})] });
    const connector = new LikeBaileys();
    connector.dropsOnOpen = true;
    sessions = new SessionManager(
      connector,
      new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger()),
      registry,
      everyLease,
      testLogger(),
      undefined,
      () => 0,
    );
    await sessions.reconnect(ID).catch(() => undefined);
    await eventually(
      async () => connector.opened.length,
      (opened) => opened >= 4,
      10_000,
    );
    const gaps = connector.opened.slice(1, 4).map((conn, i) => conn.at - connector.opened[i]!.at);
    // Each gap is the backoff's delay plus the time a connection takes to open and drop: a few ms, up to ~100 ms on a
    // loaded CI machine (2,900 for 2,800 once, rounded to 100 ms).
    const delays = [700, 1_400, 2_800];
    expect(gaps.map((gap, i) => [gap > delays[i]! - 20, gap < delays[i]! + 250])).toEqual([
      [true, true],
      [true, true],
      [true, true],
    ]);
  }, 20_000);
});
