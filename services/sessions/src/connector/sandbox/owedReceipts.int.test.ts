import { connectNats, type NatsHandle } from '@wagw/lib';
import { testLogger } from '../../../../../test/harness/logger';
import { startTestNats, type TestNats } from '../../../../../test/harness/natsServer';
import { eventually } from '../../../../../test/harness/wait';
import type { Connection, ConnectionEvent, OutboundMessage } from '../port';
import { KvSandboxLedger } from './ledger';
import { SandboxPlatform } from './sandboxPlatform';

// A sessions replica took a send and died before its receipts came: the message stayed `sent` or `delivered` for
// good (a crash hunt left 7 of 1,129 sends so), since the dispatcher never hands a sent message out again. Given two
// sandboxes on one KV ledger (two replicas), when the first takes a send and is gone after reporting its `sent`
// (recorded, or not yet), then the second, on the instance's next connection, reports what is still owed, in order,
// and owes nothing once the session recorded them.

const ID = 'A1B2C3D4E5F6A7B8C9D0';
const timings = { sentDelayMs: 10, deliveredDelayMs: 400, readDelayMs: 600 };

const message = (messageId: string): OutboundMessage => ({ messageId, to: '4915199999999', text: 'hello' });

/** A connection whose session records each receipt (`stored`) unless `records` is false (its process dies first). */
const connectLinked = async (platform: SandboxPlatform, records = true): Promise<{ connection: Connection; events: ConnectionEvent[] }> => {
  const events: ConnectionEvent[] = [];
  const connection = await platform.connect(ID, (event) => {
    events.push(event);
    if (records && event.type === 'receipt') event.stored?.();
  });
  await eventually(
    async () => events.some((e) => e.type === 'connected'),
    (connected) => connected,
  );
  return { connection, events };
};

const receiptsOf = (events: ConnectionEvent[]): string[] => events.flatMap((e) => (e.type === 'receipt' ? [`${e.messageId}:${e.status}`] : []));

describe('sandbox: receipts owed outlive the replica that took the send (NATS KV ledger)', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'owed-receipts', logger: testLogger() });
  });
  afterAll(async () => {
    await handle.close();
    await nats.dispose();
  });

  /** A send taken on a first replica, which reports its `sent` (recorded when `recorded`) and is gone. */
  const sentOnAReplicaThatDies = async (messageId: string, recorded: boolean): Promise<void> => {
    const first = new SandboxPlatform({ ...timings, ledger: await KvSandboxLedger.open(handle) });
    const a = await connectLinked(first, recorded);
    await a.connection.send(message(messageId));
    await eventually(
      async () => receiptsOf(a.events),
      (r) => r.includes(`${messageId}:sent`),
    );
    // The replica is gone with its timers (nothing of it runs or writes any more), its later receipts not reported.
    await a.connection.close();
    expect(receiptsOf(a.events)).toEqual([`${messageId}:sent`]);
  };

  /** What a second replica reports on the instance's next connection, once its `read` came. */
  const reportedNext = async (messageId: string): Promise<string[]> => {
    const ledger = await KvSandboxLedger.open(handle);
    const b = await connectLinked(new SandboxPlatform({ ...timings, ledger }));
    await eventually(
      async () => receiptsOf(b.events),
      (r) => r.includes(`${messageId}:read`),
      5_000,
    );
    // Recorded: nothing is owed any more.
    await eventually(
      async () => (await ledger.receipts.owedTo(ID)).length,
      (n) => n === 0,
    );
    await b.connection.close();
    return receiptsOf(b.events);
  };

  beforeAll(async () => {
    const platform = new SandboxPlatform({ ...timings, ledger: await KvSandboxLedger.open(handle) });
    const linking = await platform.connect(ID, () => undefined);
    await platform.scan(ID, '4915112345678');
    await linking.close();
  });

  it("come on the instance's next connection, on another replica, once recorded no more", async () => {
    await sentOnAReplicaThatDies('m_owed1', true);
    expect(await reportedNext('m_owed1')).toEqual(['m_owed1:delivered', 'm_owed1:read']);
    // A third connection hears nothing of it.
    const c = await connectLinked(new SandboxPlatform({ ...timings, ledger: await KvSandboxLedger.open(handle) }));
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(receiptsOf(c.events)).toEqual([]);
    await c.connection.close();
  }, 20_000);

  it('come again, in order, when the replica reported them but died before the session recorded them', async () => {
    await sentOnAReplicaThatDies('m_owed2', false);
    expect(await reportedNext('m_owed2')).toEqual(['m_owed2:sent', 'm_owed2:delivered', 'm_owed2:read']);
  }, 20_000);
});
