import { InMemoryEventStore } from '@wagw/lib';
import { instancesOn } from '../../../../test/harness/instancesService';

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
