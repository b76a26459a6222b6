import { AppError, connectNats, LeaseStore, Ownership, type NatsHandle } from '@wagw/lib';
import { startTestNats, type TestNats } from '../../../../test/harness/natsServer';
import { testLogger } from '../../../../test/harness/logger';
import { OwnerRouter, type OwnerOps } from './ownerRouter';

/** Owner operations that only the holder's connection can run; here each answers as the test scripts it. */
const opsOf = (checkNumbers: OwnerOps['checkNumbers']): OwnerOps => {
  const unused = (): Promise<never> => Promise.reject(new Error('not used by this test'));
  return {
    getQr: unused,
    getPairingCode: unused,
    reconnect: unused,
    checkNumbers,
    listGroups: unused,
    sandboxScan: unused,
    sandboxInbound: unused,
    sandboxRestrict: unused,
    markRead: unused,
  };
};

describe('OwnerRouter: an operation run on the replica holding the instance', () => {
  let server: TestNats;
  let nats: NatsHandle;
  const replicas: Ownership[] = [];
  const routers: OwnerRouter[] = [];

  beforeAll(async () => {
    server = await startTestNats();
    nats = await connectNats({ url: server.url, name: 'owner-router-test', logger: testLogger('router') });
  });
  afterAll(async () => {
    await Promise.all(routers.map((router) => router.stop()));
    await Promise.all(replicas.map((replica) => replica.stop()));
    await nats.close();
    await server.dispose();
  });

  const replica = async (store: LeaseStore, id: string, ops: OwnerOps): Promise<{ ownership: Ownership; router: OwnerRouter }> => {
    const ownership = new Ownership(store, { replicaId: id, ttlMs: 5_000, renewEveryMs: 1_000 }, testLogger(id));
    await ownership.start();
    replicas.push(ownership);
    const router = new OwnerRouter(nats, ownership, ops, testLogger(id), 2_000);
    router.start();
    routers.push(router);
    return { ownership, router };
  };

  it("answers the owner's error with everything the error model carries: a throttle's wait (Retry-After) too", async () => {
    const store = await LeaseStore.open(nats, 'router_test_leases');
    const throttled = new AppError('rate_limited', 'number_checks_throttled', 'Too many number checks; retry in 42 s', { retryAfterS: 42 });
    const owner = await replica(
      store,
      'b',
      opsOf(() => Promise.reject(throttled)),
    );
    const caller = await replica(
      store,
      'a',
      opsOf(() => Promise.reject(new Error('the caller does not hold the instance'))),
    );
    expect(await owner.ownership.acquire('I1')).toBe(true);
    for (let i = 0; i < 50 && caller.ownership.holderOf('I1') !== 'b'; i++) await new Promise((resolve) => setTimeout(resolve, 100));

    const failure = caller.router.checkNumbers('I1', ['4915112345678']);
    await expect(failure).rejects.toMatchObject({ kind: 'rate_limited', code: 'number_checks_throttled', retryAfterS: 42 });
  });
});
