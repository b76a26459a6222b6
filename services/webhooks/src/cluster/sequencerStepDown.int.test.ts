import { connectNats, instanceEvent, instanceIdFor, instanceStream, JetStreamEventStore, STREAMS, type Delivery, type NatsHandle } from '@wagw/lib';
import { startTestNats, type TestNats } from '../../../../test/harness/natsServer';
import { testLogger } from '../../../../test/harness/logger';
import { sleep } from '../../../../test/harness/wait';
import { Sequencer, type SequencerLease, type SequencerMembers, type SequencerSender } from './sequencer';
import type { WorkOutcome } from './workChannel';

// The real sequencer and durable subscription on a real nats-server; lease, members and sender are stand-ins.
describe('Sequencer on JetStream: after its lease is lost', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  let store: JetStreamEventStore;
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'sequencer-stepdown-int', logger: testLogger() });
    store = await JetStreamEventStore.open(handle, { streamName: STREAMS.events.name, subjectPrefix: STREAMS.events.subjectPrefix, logger: testLogger() });
  });
  afterAll(async () => {
    await handle.close();
    await nats.dispose();
  });

  it('hands out no event it reads after the step-down (they go back to JetStream for the new leader)', async () => {
    let owned = true;
    let lost: (key: string) => void = () => undefined;
    const lease: SequencerLease = {
      start: async () => undefined,
      stop: async () => undefined,
      acquire: async () => owned,
      owns: () => owned,
      onLost: (listener) => void (lost = listener),
      onFreed: () => undefined,
    };
    const members: SequencerMembers = { self: 'a', usable: () => ['a', 'b'], unreachable: () => undefined, onGone: () => undefined };
    const handedOut: Array<{ to: string; sequence: number; at: number }> = [];
    const sender: SequencerSender = {
      send: (member, d) => {
        handedOut.push({ to: member, sequence: d.commit.sequence, at: Date.now() });
        return new Promise<WorkOutcome>(() => undefined);
      },
      abandon: () => undefined,
    };
    const local = (_id: string, d: Delivery): void => void handedOut.push({ to: 'a', sequence: d.commit.sequence, at: Date.now() });
    const sequencer = new Sequencer(store, lease, members, sender, local, testLogger('sequencer'), {
      ackWaitMs: 30_000,
      batch: 16,
      claimEveryMs: 60_000,
      drainTimeoutMs: 100,
    });
    await sequencer.start();
    await sleep(300); // the subscription's pull is under way
    owned = false;
    lost('sequencer');
    // Events appended just after the lease was lost (another replica may lead now).
    const id = instanceIdFor('acme', 'after-stepdown');
    for (let i = 0; i < 3; i++) {
      await store.append(instanceStream(id), [instanceEvent('InstanceReset', new Date().toISOString(), {})], { expectedVersion: 'any', commandId: `s${i}` });
    }
    await sleep(1_500);
    await sequencer.stop();
    sequencer.close();
    expect(handedOut).toEqual([]);
  }, 30_000);
});
