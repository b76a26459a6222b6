import type { Leases } from '../../services/sessions/src/session/sessionOptions';

/** The leases of a replica that holds every instance's, always (the only replica; no lease is lost or freed). */
export const everyLease: Leases = {
  acquire: async () => true,
  release: async () => undefined,
  owns: () => true,
  isFree: () => false,
  onLost: () => undefined,
  onFreed: () => undefined,
  stop: async () => undefined,
};
