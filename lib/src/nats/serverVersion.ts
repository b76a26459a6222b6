/** The oldest nats-server this product runs on: 2.9.4 brought the JetStream consumer API the client uses. */
export const MIN_SERVER_VERSION = '2.9.4';

const parse = (version: string): [number, number, number] => {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!match) return [0, 0, 0];
  return [Number(match[1]), Number(match[2]), Number(match[3])];
};

/** Negative when a < b, zero when equal, positive when a > b (major.minor.patch only). */
export const compareVersions = (a: string, b: string): number => {
  const [pa, pb] = [parse(a), parse(b)];
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  return 0;
};

/**
 * The oldest server that enforces optimistic concurrency (`Nats-Expected-Last-Subject-Sequence`) on replicated
 * streams: before it, concurrent appends to one aggregate could all win on an R3 stream (nats-server #4320, measured
 * on Debian's 2.9.10: 198 of 200 rounds had several winners).
 */
export const MIN_REPLICATED_SERVER_VERSION = '2.9.21';

/**
 * Refuses a server older than the minimum, and replicated streams (`replicas` > 1) on a server that is too old for
 * them or not part of a cluster. Features that 2.9 silently ignores (per-key KV TTL, atomic batches, wildcard CAS,
 * multi-filter consumers) are not relied on.
 */
export const assertSupportedServer = (version: string | undefined, replicas = 1, cluster?: string): void => {
  if (!version || compareVersions(version, MIN_SERVER_VERSION) < 0) {
    throw new Error(`nats-server ${version ?? 'unknown'} is too old: ${MIN_SERVER_VERSION} or newer is required`);
  }
  if (replicas <= 1) return;
  if (compareVersions(version, MIN_REPLICATED_SERVER_VERSION) < 0) {
    throw new Error(
      `NATS_REPLICAS=${replicas} needs nats-server ${MIN_REPLICATED_SERVER_VERSION} or newer (found ${version}, which does not enforce ` +
        'optimistic concurrency on replicated streams); use a current 2.12.x server (scripts/ensure-nats-server.sh) or NATS_REPLICAS=1',
    );
  }
  if (!cluster) {
    throw new Error(
      `NATS_REPLICAS=${replicas} needs a NATS cluster of at least ${replicas} JetStream servers, but the server is not clustered; use NATS_REPLICAS=1`,
    );
  }
};
