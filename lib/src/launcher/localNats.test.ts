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
    expect(localReplicas(0, 1)).toEqual({ problem: 'NATS_REPLICAS must be from 1 to 5, got 0: use 1, or leave it unset (1)' });
    expect(localReplicas(3, 2)).toEqual({ problem: expect.stringContaining('use 1 to 2') });
    expect(localReplicas(6, 7)).toEqual({ problem: expect.stringContaining('use 1 to 5') });
    expect(localReplicas(9, 1)).toEqual({ problem: 'NATS_REPLICAS must be from 1 to 5, got 9: use 1, or leave it unset (1)' });
  });

  it('advises only settings that it then accepts (never a cluster that cannot keep that many copies either)', () => {
    const advice: string[] = [];
    for (let size = 0; size <= 7; size++) {
      for (let configured = 0; configured <= 9; configured++) {
        const result = localReplicas(configured, size);
        if (!('problem' in result)) continue;
        // Each way out it names: NATS_CLUSTER_SIZE=N with this NATS_REPLICAS, NATS_REPLICAS from 1 to M on this cluster.
        const clusterSize = /NATS_CLUSTER_SIZE=(\d+)/.exec(result.problem)?.[1];
        if (clusterSize !== undefined) advice.push(`${configured}@${clusterSize}: ${JSON.stringify(localReplicas(configured, Number(clusterSize)))}`);
        const use = /use 1(?: to (\d+))?/.exec(result.problem);
        if (use) advice.push(`${use[1] ?? 1}@${size}: ${JSON.stringify(localReplicas(Number(use[1] ?? 1), size))}`);
      }
    }
    expect(advice.length).toBeGreaterThan(20);
    expect(advice.filter((line) => line.includes('problem'))).toEqual([]);
  });
});
