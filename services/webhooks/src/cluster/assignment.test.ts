import { preferredReplica, routeEvent } from './assignment';

const instances = Array.from({ length: 2_000 }, (_, i) => `INST${String(i).padStart(16, '0')}`);

describe('instance assignment', () => {
  it('spreads instances evenly over the replicas', () => {
    const replicas = ['a-1', 'b-2', 'c-3'];
    const counts = new Map<string, number>();
    for (const id of instances) {
      const replica = preferredReplica(id, replicas)!;
      counts.set(replica, (counts.get(replica) ?? 0) + 1);
    }
    for (const replica of replicas) expect(counts.get(replica)).toBeGreaterThan(2_000 / 3 - 150);
  });

  it('moves only the instances of a replica that left, whatever the order of the list', () => {
    const before = instances.map((id) => preferredReplica(id, ['a-1', 'b-2', 'c-3']));
    const after = instances.map((id) => preferredReplica(id, ['c-3', 'a-1']));
    instances.forEach((_, i) => {
      if (before[i] !== 'b-2') expect(after[i]).toBe(before[i]);
    });
  });

  it('sends an instance to its preferred replica, behind its earlier events there', () => {
    const id = instances[0]!;
    const preferred = preferredReplica(id, ['a-1', 'b-2'])!;
    expect(routeEvent(id, undefined, ['a-1', 'b-2'], 'a-1')).toEqual({ kind: 'send', replica: preferred });
    expect(routeEvent(id, { replica: preferred, outstanding: 3, held: 0 }, ['a-1', 'b-2'], 'a-1')).toEqual({ kind: 'send', replica: preferred });
  });

  it('holds the events of an instance that moves until the other replica has finished its earlier ones', () => {
    const id = instances[1]!;
    const preferred = preferredReplica(id, ['a-1', 'b-2'])!;
    const other = preferred === 'a-1' ? 'b-2' : 'a-1';
    expect(routeEvent(id, { replica: other, outstanding: 2, held: 0 }, ['a-1', 'b-2'], 'a-1')).toEqual({ kind: 'hold' });
    expect(routeEvent(id, { replica: other, outstanding: 0, held: 0 }, ['a-1', 'b-2'], 'a-1')).toEqual({ kind: 'send', replica: preferred });
  });

  it('keeps an event behind held ones even when the replica in charge is preferred again', () => {
    const id = instances[2]!;
    const preferred = preferredReplica(id, ['a-1', 'b-2'])!;
    expect(routeEvent(id, { replica: preferred, outstanding: 1, held: 1 }, ['a-1', 'b-2'], 'a-1')).toEqual({ kind: 'hold' });
  });

  it('holds while the replica with earlier work is draining', () => {
    expect(routeEvent(instances[1]!, { replica: 'b-2', outstanding: 1, held: 0 }, ['a-1'], 'a-1')).toEqual({ kind: 'hold' });
  });

  it('falls back to this replica when it knows of none', () => {
    expect(routeEvent(instances[2]!, undefined, [], 'a-1')).toEqual({ kind: 'send', replica: 'a-1' });
  });
});
