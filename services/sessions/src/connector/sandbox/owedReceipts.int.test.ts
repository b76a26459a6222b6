import { connectNats, type NatsHandle } from '@wagw/lib';
import { testLogger } from '../../../../../test/harness/logger';
import { startTestNats, type TestNats } from '../../../../../test/harness/natsServer';
import { eventually } from '../../../../../test/harness/wait';
import type { Connection, ConnectionEvent, OutboundMessage } from '../port';
import { KvSandboxLedger } from './ledger';
import { SandboxPlatform } from './sandboxPlatform';

// A sessions replica took a send and died before its receipts came: the message stayed `sent` or `delivered` for
// good (a crash hunt left 7 of 1,129 sends so), since the dispatcher never hands a sent message out again. Given two
// sandboxes on one KV ledger (two replicas), when the first takes a send and is gone after its `sent`, then the
// second, on the instance's next connection, reports the `delivered` and `read` still owed, once, and owes nothing after.

const ID = 'A1B2C3D4E5F6A7B8C9D0';
const timings = { sentDelayMs: 10, deliveredDelayMs: 400, readDelayMs: 600 };

const message = (messageId: string): OutboundMessage => ({ messageId, to: '4915199999999', text: 'hello' });

const connectLinked = async (platform: SandboxPlatform): Promise<{ connection: Connection; events: ConnectionEvent[] }> => {
  const events: ConnectionEvent[] = [];
  const connection = await platform.connect(ID, (event) => events.push(event));
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

  it("come on the instance's next connection, on another replica, once", async () => {
    const first = new SandboxPlatform({ ...timings, ledger: await KvSandboxLedger.open(handle) });
    const linking = await first.connect(ID, () => undefined);
    await first.scan(ID, '4915112345678');
    await linking.close();

    const a = await connectLinked(first);
    await a.connection.send(message('m_owed1'));
    await eventually(
      async () => receiptsOf(a.events),
      (r) => r.includes('m_owed1:sent'),
    );
    // The replica is gone with its timers (nothing of it runs or writes any more), its receipts not reported.
    await a.connection.close();
    expect(receiptsOf(a.events)).toEqual(['m_owed1:sent']);

    const secondLedger = await KvSandboxLedger.open(handle);
    const second = new SandboxPlatform({ ...timings, ledger: secondLedger });
    const b = await connectLinked(second);
    await eventually(
      async () => receiptsOf(b.events),
      (r) => r.includes('m_owed1:read'),
      5_000,
    );
    expect(receiptsOf(b.events)).toEqual(['m_owed1:delivered', 'm_owed1:read']);
    // Paid: nothing is owed any more, so a third connection hears nothing of it.
    await eventually(
      async () => (await secondLedger.receipts.owedTo(ID)).length,
      (n) => n === 0,
    );
    await b.connection.close();
    const c = await connectLinked(new SandboxPlatform({ ...timings, ledger: await KvSandboxLedger.open(handle) }));
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(receiptsOf(c.events)).toEqual([]);
    await c.connection.close();
  }, 20_000);
});
