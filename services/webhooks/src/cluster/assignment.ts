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
