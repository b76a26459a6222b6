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
 * Refuses a server older than the minimum. Features that 2.9 silently ignores (per-key KV TTL, atomic batches,
 * wildcard CAS, multi-filter consumers) are never used, so anything from 2.9.4 on behaves the same.
 */
export const assertSupportedServer = (version: string | undefined): void => {
  if (!version || compareVersions(version, MIN_SERVER_VERSION) < 0) {
    throw new Error(`nats-server ${version ?? 'unknown'} is too old: ${MIN_SERVER_VERSION} or newer is required`);
  }
};
