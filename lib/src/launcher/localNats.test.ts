import { localReplicas } from './localNats';

describe('localReplicas (NATS_REPLICAS on the launcher own nats-server)', () => {
  it('defaults to min(size, 3) and honours a setting the local server or cluster can keep', () => {
    expect([1, 2, 3, 5].map((size) => localReplicas(undefined, size))).toEqual([{ replicas: 1 }, { replicas: 2 }, { replicas: 3 }, { replicas: 3 }]);
    expect(localReplicas(1, 1)).toEqual({ replicas: 1 });
    expect(localReplicas(1, 3)).toEqual({ replicas: 1 });
    expect(localReplicas(5, 5)).toEqual({ replicas: 5 });
  });

  it('refuses, with the fix, a setting it would otherwise have to override (more copies than servers, 0, above 5)', () => {
    expect(localReplicas(3, 1)).toEqual({ problem: expect.stringContaining('NATS_REPLICAS=3 needs a cluster') });
    expect(localReplicas(3, 1)).toEqual({ problem: expect.stringContaining('NATS_CLUSTER_SIZE=3') });
    expect(localReplicas(0, 1)).toEqual({ problem: expect.stringContaining('NATS_REPLICAS=0') });
    expect(localReplicas(3, 2)).toEqual({ problem: expect.stringContaining('use 1 to 2') });
    expect(localReplicas(6, 7)).toEqual({ problem: expect.stringContaining('use 1 to 5') });
  });
});
