import { conflict } from '@wagw/lib';
import type { SandboxPlatform } from '../connector/sandbox';
import type { Dispatcher } from '../dispatch/dispatcher';
import type { SessionManager } from '../session/sessionManager';
import type { OwnerOps } from './ownerRouter';

/** The owner's side of each operation: this replica's connections, dispatcher and (in sandbox mode) platform. */
export const localOwnerOps = (sessions: SessionManager, dispatcher: Dispatcher, sandbox: SandboxPlatform | null): OwnerOps => {
  const sandboxOnly = (): SandboxPlatform => {
    if (!sandbox) throw conflict('sandbox_only', 'This works only with the sandbox connector (WA_CONNECTOR=sandbox)');
    return sandbox;
  };
  return {
    getQr: (instanceId, waitMs) => sessions.getQr(instanceId, waitMs),
    reconnect: (instanceId) => sessions.reconnect(instanceId),
    dispatch: (instanceId, accepted, sequence) => dispatcher.dispatchOwned(instanceId, accepted, sequence),
    sandboxScan: async (instanceId, number) => {
      const platform = sandboxOnly();
      try {
        await platform.scan(instanceId, number);
      } catch (error) {
        throw conflict('no_qr_waiting', error instanceof Error ? error.message : 'No QR code is waiting to be scanned');
      }
    },
    sandboxInbound: async (instanceId, from, pushName, text) => {
      const platform = sandboxOnly();
      try {
        platform.inject(instanceId, { from, pushName: pushName || null, text, media: null });
      } catch (error) {
        throw conflict('not_connected', error instanceof Error ? error.message : 'The instance is not connected');
      }
    },
  };
};
