import { headers } from '@nats-io/transport-node';
import { connectNats, encodeCommit, SUBJECTS, type Delivery, type NatsHandle } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { startTestNats, type TestNats } from '../../../../test/harness/natsServer';
import { serveWork, WorkSender } from './workChannel';

// The work channel on a real nats-server: whether a forwarded event is its instance's first on the replica (the
// sequencer's "arrived" mark) reaches the replica, and an event forwarded without it (a sequencer of an earlier
// release) counts as arrived, so the replica reads the instance's handover marker rather than trust its memory.
describe('work channel (real NATS): the arrived mark', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'work-channel-int', logger: testLogger() });
  });
  afterAll(async () => {
    await handle.close();
    await nats.dispose();
  });

  const delivery = (sequence: number): Delivery => ({
    commit: { stream: 'I0000000000000000001.instance', sequence, commandId: `c${sequence}`, events: [] },
    deliveryCount: 1,
    ack: () => undefined,
    nak: () => undefined,
    inProgress: () => undefined,
  });

  it('carries the mark, and takes an event without one as arrived', async () => {
    const got: Array<[number, boolean]> = [];
    const sub = serveWork(handle.nc, 'r1', (d, arrived) => {
      got.push([d.commit.sequence, arrived]);
      d.ack();
    });
    const sender = new WorkSender(handle.nc, 5_000);
    try {
      expect(await sender.send('r1', delivery(1), true)).toEqual({ kind: 'ack' });
      expect(await sender.send('r1', delivery(2), false)).toEqual({ kind: 'ack' });
      // As a sequencer of an earlier release forwards it: the same headers, no Wagw-Arrived.
      const h = headers();
      h.set('Wagw-Stream', 'I0000000000000000001.instance');
      h.set('Wagw-Sequence', '3');
      h.set('Wagw-Command', 'c3');
      h.set('Wagw-Count', '1');
      const reply = await handle.nc.request(SUBJECTS.webhooksWork('r1'), encodeCommit([]), { headers: h, timeout: 5_000 });
      expect(reply.string()).toBe('ack');
      expect(got).toEqual([
        [1, true],
        [2, false],
        [3, true],
      ]);
    } finally {
      sub.unsubscribe();
      sender.close();
    }
  });
});
