import { connectNats, type NatsHandle } from '../nats';
import { startTestNats, type TestNats } from '../../../test/harness/natsServer';
import { testLogger } from '../../../test/harness/logger';
import { LeaseStore } from './leaseStore';
import { Ownership } from './ownership';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('leases on a real nats-server', () => {
  let server: TestNats;
  let nats: NatsHandle;
  let store: LeaseStore;
  const running: Ownership[] = [];

  beforeAll(async () => {
    server = await startTestNats();
    nats = await connectNats({ url: server.url, name: 'ownership-test', logger: testLogger('ownership') });
    store = await LeaseStore.open(nats, 'test_leases');
  });
  afterAll(async () => {
    await nats.close();
    await server.dispose();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((o) => o.stop()));
  });

  const replica = async (replicaId: string, ttlMs = 600, renewEveryMs = 150): Promise<Ownership> => {
    const ownership = new Ownership(store, { replicaId, ttlMs, renewEveryMs }, testLogger(replicaId));
    await ownership.start();
    running.push(ownership);
    return ownership;
  };

  it('gives an instance to one replica at a time, and keeps it there while it renews', async () => {
    const a = await replica('a');
    const b = await replica('b');
    expect(await a.acquire('I1')).toBe(true);
    expect(await b.acquire('I1')).toBe(false);
    await sleep(1_000); // longer than the TTL: only renewals keep it
    expect(await b.acquire('I1')).toBe(false);
    expect(a.owns('I1')).toBe(true);
    expect(b.holderOf('I1')).toBe('a');
    expect(b.isFree('I1')).toBe(false);
  });

  it('lets another replica take over once a crashed holder stops renewing, and tells a late holder it lost', async () => {
    const crashed = await replica('crashed', 500, 60_000); // never renews: as good as dead after 500 ms
    const lost: string[] = [];
    crashed.onLost((id) => lost.push(id));
    const survivor = await replica('survivor');
    expect(await crashed.acquire('I2')).toBe(true);
    expect(await survivor.acquire('I2')).toBe(false);
    await sleep(600);
    expect(survivor.isFree('I2')).toBe(true);
    expect(await survivor.acquire('I2')).toBe(true);
    expect((await store.read('I2'))?.owner).toBe('survivor');
    // The crashed replica's watch sees the new holder: it must stop its connection.
    await sleep(100);
    expect(lost).toEqual(['I2']);
    expect(crashed.owns('I2')).toBe(false);
  });

  it('gives a lease up before its TTL when renewals hang (NATS failing over), so no one else runs it meanwhile', async () => {
    let hang = false;
    const stalled: LeaseStore = Object.create(store) as LeaseStore;
    stalled.renew = (...args) => (hang ? new Promise(() => undefined) : store.renew(...args));
    const holder = new Ownership(stalled, { replicaId: 'stalled', ttlMs: 800, renewEveryMs: 150 }, testLogger('stalled'));
    await holder.start();
    running.push(holder);
    const lost: number[] = [];
    expect(await holder.acquire('I4')).toBe(true);
    await sleep(300);
    hang = true;
    const hungAt = Date.now();
    holder.onLost(() => lost.push(Date.now() - hungAt));
    await sleep(900);
    expect(lost).toHaveLength(1);
    // Lost within the TTL of the last renewal (at most 150 ms before the hang), before anyone else may take it.
    expect(lost[0]).toBeLessThan(800 - 150);
    expect(holder.owns('I4')).toBe(false);
  });

  it('hands back a lease whose taking came back too late to keep it (NATS failing over), so no work starts on it', async () => {
    const slow: LeaseStore = Object.create(store) as LeaseStore;
    // The write lands at once; its answer comes 700 ms later, past the 800 ms TTL less its 200 ms margin.
    slow.tryAcquire = async (...args) => {
      const revision = await store.tryAcquire(...args);
      await sleep(700);
      return revision;
    };
    const late = new Ownership(slow, { replicaId: 'late', ttlMs: 800, renewEveryMs: 150 }, testLogger('late'));
    await late.start();
    running.push(late);
    expect(await late.acquire('I6')).toBe(false);
    expect(late.owns('I6')).toBe(false);
    // Handed back, not left to expire: another replica takes it at once.
    const other = await replica('other');
    expect(await other.acquire('I6')).toBe(true);
  });

  it("keeps a lease whose renewal was stored but whose answer was lost (a time-out): it is still this replica's", async () => {
    let loseNextAnswer = false;
    const flaky: LeaseStore = Object.create(store) as LeaseStore;
    flaky.renew = async (...args) => {
      const revision = await store.renew(...args);
      if (!loseNextAnswer) return revision;
      loseNextAnswer = false;
      throw new Error('the answer to a stored renewal was lost (time-out)');
    };
    const holder = new Ownership(flaky, { replicaId: 'flaky', ttlMs: 2_000, renewEveryMs: 100 }, testLogger('flaky'));
    await holder.start();
    running.push(holder);
    const lost: string[] = [];
    holder.onLost((key) => lost.push(key));
    expect(await holder.acquire('I5')).toBe(true);
    await sleep(250);
    loseNextAnswer = true;
    // The next renewals go on from the revision that was stored, not from the one before it.
    await sleep(600);
    expect(lost).toEqual([]);
    expect(holder.owns('I5')).toBe(true);
    const record = await store.read('I5');
    expect(record?.owner).toBe('flaky');
    expect(record!.until).toBeGreaterThan(Date.now() + 1_500);
  });

  it('hands a lease over at once on a clean shutdown', async () => {
    const leaving = new Ownership(store, { replicaId: 'leaving', ttlMs: 60_000, renewEveryMs: 20_000 }, testLogger('leaving'));
    await leaving.start();
    const staying = await replica('staying');
    const freed: string[] = [];
    staying.onFreed((id) => freed.push(id));
    expect(await leaving.acquire('I3')).toBe(true);
    await sleep(100);
    expect(staying.holderOf('I3')).toBe('leaving');
    await leaving.stop();
    await sleep(100);
    expect(freed).toEqual(['I3']);
    expect(await staying.acquire('I3')).toBe(true);
  });
});
