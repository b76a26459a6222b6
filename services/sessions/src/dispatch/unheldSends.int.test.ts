import { connectNats, type NatsHandle } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { startTestNats, type TestNats } from '../../../../test/harness/natsServer';
import { eventually } from '../../../../test/harness/wait';
import { UnheldSendsDecider } from './unheldSends';

const TTL_MS = 1_500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Which replica fails the queued sends of instances nobody holds: one at a time, on a real nats-server.
describe('UnheldSendsDecider on a real nats-server', () => {
  let server: TestNats;
  const connections: NatsHandle[] = [];
  const deciders: UnheldSendsDecider[] = [];

  beforeAll(async () => {
    server = await startTestNats();
  });
  afterAll(async () => {
    await Promise.all(deciders.map((d) => d.stop()));
    await Promise.all(connections.map((c) => c.close().catch(() => undefined)));
    await server.dispose();
  });

  interface Replica {
    decider: UnheldSendsDecider;
    /** Closes its connection: no renewal, no release, as when its process dies. */
    crash: () => Promise<void>;
  }

  /** A replica with its own NATS connection, so that closing it is a crash. */
  const replica = async (replicaId: string): Promise<Replica> => {
    const nats = await connectNats({ url: server.url, name: replicaId, logger: testLogger(replicaId) });
    connections.push(nats);
    const decider = await UnheldSendsDecider.open(nats, { replicaId, ttlMs: TTL_MS, renewEveryMs: 150, claimEveryMs: 100 }, testLogger(replicaId));
    await decider.start();
    deciders.push(decider);
    return { decider, crash: () => nats.close() };
  };
  const deciding = (replicas: Replica[]): Replica[] => replicas.filter((r) => r.decider.decides());

  it('lets one replica decide at a time: the first, then at once another when it stops, then after the TTL when that one crashes', async () => {
    const first = await replica('first');
    expect(first.decider.decides()).toBe(true);
    const others = [await replica('a'), await replica('b')];
    await sleep(TTL_MS + 100); // renewals keep it with its holder
    expect(deciding([first, ...others])).toEqual([first]);

    const stoppedAt = Date.now();
    await first.decider.stop();
    const [next] = await eventually(
      async () => deciding(others),
      (d) => d.length === 1,
      2_000,
    );
    // Handed over at the next claim (100 ms), not when the lease lapses (at least 3/4 of the TTL).
    expect(Date.now() - stoppedAt).toBeLessThan(500);

    const survivor = others.find((r) => r !== next)!;
    await next!.crash();
    await sleep(TTL_MS / 3);
    // Still the crashed replica's until its lease lapses: nobody decides twice.
    expect(survivor.decider.decides()).toBe(false);
    await eventually(
      async () => survivor.decider.decides(),
      (d) => d,
      3_000,
    );
  });
});
