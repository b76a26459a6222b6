import { InMemoryEventStore } from '@wagw/lib';
import { instancesOn } from '../../../../test/harness/instancesService';
import { testLogger } from '../../../../test/harness/logger';
import { InstanceDirectory } from './instanceDirectory';

// Application test of the instance quota under a burst: the real service and directory on the in-memory store.

describe('the instance quota under parallel creates (application, in-memory store)', () => {
  it('creates exactly the quota of a burst, counts the creates under way in status, and passes their retries', async () => {
    const store = new InMemoryEventStore();
    const { service, directory } = instancesOn(store, { instanceQuota: 5 });
    try {
      const burst = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => service.create('acme', `burst-${i}`)));
      const refused = burst.flatMap((r) => (r.status === 'rejected' ? [r.reason as { code?: string }] : []));
      expect(burst.length - refused.length).toBe(5);
      expect(new Set(refused.map((e) => e.code))).toEqual(new Set(['instance_quota_reached']));
      expect(service.instanceUsage('acme')).toEqual({ used: 5, max: 5 });
      // A retry of a create that went through passes (at once, and once the directory shows it); others stay refused.
      const passed = burst.findIndex((r) => r.status === 'fulfilled');
      await expect(service.create('acme', `burst-${passed}`)).resolves.toBeDefined();
      await directory.catchUp(1_000);
      expect(service.instanceUsage('acme')).toEqual({ used: 5, max: 5 });
      await expect(service.create('acme', `burst-${passed}`)).resolves.toBeDefined();
      await expect(service.create('acme', 'one-more')).rejects.toMatchObject({ code: 'instance_quota_reached' });
      // Another account has its own quota.
      await expect(service.create('other', 'first')).resolves.toBeDefined();
    } finally {
      service.close();
      await directory.stop();
    }
  });
});

describe('the instance quota after a restart from a checkpoint (application, in-memory store)', () => {
  it("counts the checkpoint's instances: a restarted replica refuses what the quota refused before", async () => {
    const store = new InMemoryEventStore();
    const before = instancesOn(store, { instanceQuota: 3 });
    for (const key of ['a', 'b', 'c']) await before.service.create('acme', key);
    await before.service.create('other', 'x');
    await before.directory.catchUp(1_000);
    const checkpoint = before.directory.snapshot();
    before.service.close();
    await before.directory.stop();

    // What a restarted instances service does: its directory starts from the checkpoint, then folds what came after.
    const directory = new InstanceDirectory(store, testLogger());
    directory.restoreCheckpoint(checkpoint);
    directory.start();
    const { service } = instancesOn(store, { instanceQuota: 3 }, directory);
    try {
      await expect(service.create('acme', 'd')).rejects.toMatchObject({ code: 'instance_quota_reached' });
      expect(service.instanceUsage('acme')).toEqual({ used: 3, max: 3 });
      await service.create('other', 'y');
      await directory.catchUp(1_000);
      expect([directory.countOf('acme'), directory.countOf('other')]).toEqual([3, 2]);
    } finally {
      service.close();
      await directory.stop();
    }
  });
});
