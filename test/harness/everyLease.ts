import type { Leases } from '../../services/sessions/src/session/sessionOptions';

/**
 * The leases of a replica that holds every instance's, always (the only replica; no lease is lost or freed). It
 * lists none held, so the sweep that gives back leases with nothing running under them leaves them alone.
 */
export const everyLease: Leases = {
  acquire: async () => true,
  release: async () => undefined,
  owns: () => true,
  ownedKeys: () => [],
  isFree: () => false,
  onLost: () => undefined,
  onFreed: () => undefined,
  stop: async () => undefined,
};
