/** FNV-1a, 32 bits: a fast, well-spread hash of a short string. */
const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
};

/**
 * The replica an instance's webhooks should go to, by rendezvous hashing: every replica scores the pair, the highest
 * wins. Instances spread evenly, and when a replica joins or leaves only the instances it wins or held move.
 */
export const preferredReplica = (instanceId: string, replicas: readonly string[]): string | undefined => {
  let best: string | undefined;
  let bestScore = -1;
  for (const replica of replicas) {
    const score = fnv1a(`${replica}\u0000${instanceId}`);
    if (score > bestScore || (score === bestScore && best !== undefined && replica < best)) {
      best = replica;
      bestScore = score;
    }
  }
  return best;
};

/**
 * Where an instance's events are being worked on (one replica at a time), how many it has not finished, and how many
 * later events wait for those.
 */
export interface InstanceWork {
  replica: string;
  outstanding: number;
  held: number;
}

/**
 * Where the next event of an instance goes: to its preferred replica among the usable ones. While another replica
 * still works on the instance's earlier events (the instance is moving: a replica joined, or its replica drains),
 * the event is held until that work is done, so two replicas never work on one instance at once and order holds.
 */
export const routeEvent = (
  instanceId: string,
  current: InstanceWork | undefined,
  usable: readonly string[],
  self: string,
): { kind: 'send'; replica: string } | { kind: 'hold' } => {
  const preferred = preferredReplica(instanceId, usable) ?? self;
  // Behind held events, an event waits too, even if the instance's replica is preferred again meanwhile.
  if (current && (current.held > 0 || (current.outstanding > 0 && current.replica !== preferred))) return { kind: 'hold' };
  return { kind: 'send', replica: preferred };
};

/** Instances whose last replica a sequencer remembers; past it the oldest is forgotten (costs it one marker read). */
const REMEMBERED_INSTANCES = 100_000;

/**
 * The replica each instance's last event went to, as this sequencer handed them out. An event that goes to another
 * replica (or of an instance not known here: this replica just took the lead, or forgot it) is the first that replica
 * works on since the instance came to it: what it holds in memory of the instance may be stale, so it reads the
 * instance's handover marker once (`worker/slowInstances.ts`). Every other event needs no read: the hot path.
 */
export class LastReplicas {
  private readonly last = new Map<string, string>();

  constructor(private readonly capacity = REMEMBERED_INSTANCES) {}

  /** Records that the instance's next event goes to `replica`; true when it arrives there with it. */
  arrives(instanceId: string, replica: string): boolean {
    const before = this.last.get(instanceId);
    // Deleted and set again: the map's order is then the order of use, and the least recently used goes first.
    this.last.delete(instanceId);
    this.last.set(instanceId, replica);
    if (this.last.size > this.capacity) this.last.delete(this.last.keys().next().value!);
    return before !== replica;
  }

  /** Forgets every instance: another leader may have moved them meanwhile. */
  clear(): void {
    this.last.clear();
  }
}
