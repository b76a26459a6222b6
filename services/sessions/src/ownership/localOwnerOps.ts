import { conflict, invalidArgument, type Logger } from '@wagw/lib';
import { SANDBOX_MEDIA_KINDS, SandboxNotInGroup, type SandboxMediaKind, type SandboxPlatform } from '../connector/sandbox';
import { markRead, overConnection } from '../inbound/inboundOps';
import type { InboundRefStore } from '../inbound/inboundRefs';
import type { NumberCheckThrottle } from '../session/numberCheckThrottle';
import type { SessionManager } from '../session/sessionManager';
import type { OwnerOps } from './ownerRouter';

/** The owner's side of each operation: this replica's connections and (in sandbox mode) platform. */
export const localOwnerOps = (
  sessions: SessionManager,
  sandbox: SandboxPlatform | null,
  numberChecks: NumberCheckThrottle,
  refs: InboundRefStore,
  logger: Logger,
): OwnerOps => {
  const sandboxOnly = (): SandboxPlatform => {
    if (!sandbox) throw conflict('sandbox_only', 'This works only with the sandbox connector (WA_CONNECTOR=sandbox)');
    return sandbox;
  };
  return {
    getQr: (instanceId, waitMs) => sessions.getQr(instanceId, waitMs),
    getPairingCode: (instanceId, number, waitMs) => sessions.getPairingCode(instanceId, number, waitMs),
    reconnect: (instanceId) => sessions.reconnect(instanceId),
    checkNumbers: (instanceId, numbers) =>
      overConnection(
        sessions.connected(instanceId),
        'numbers are checked',
        { code: 'number_check_failed', message: 'The platform did not answer the number check' },
        (connection) => {
          // Inside: a 429 of the throttle passes as it is, and only after the instance is known to be connected.
          numberChecks.take(instanceId, numbers.length);
          return connection.checkNumbers(numbers);
        },
      ),
    listGroups: (instanceId) =>
      overConnection(
        sessions.connected(instanceId),
        'groups are listed',
        { code: 'list_groups_failed', message: 'The platform did not answer the group list' },
        (connection) => connection.listGroups(),
      ),
    sandboxScan: async (instanceId, number) => {
      const platform = sandboxOnly();
      try {
        await platform.scan(instanceId, number);
      } catch (error) {
        throw conflict('no_qr_waiting', error instanceof Error ? error.message : 'No QR code is waiting to be scanned');
      }
    },
    sandboxRestrict: async (instanceId, untilMs, lift) => {
      const platform = sandboxOnly();
      if (lift) platform.lift(instanceId);
      else platform.restrict(instanceId, untilMs);
    },
    markRead: (instanceId, messageId) => markRead(refs, sessions.connected(instanceId), instanceId, messageId, logger),
    sandboxInbound: async (instanceId, { from, pushName, text, media, groupId }) => {
      const platform = sandboxOnly();
      if (media && !SANDBOX_MEDIA_KINDS.includes(media.kind as SandboxMediaKind)) {
        throw invalidArgument('invalid_media_kind', `media must be one of ${SANDBOX_MEDIA_KINDS.join(', ')}`);
      }
      try {
        platform.inject(instanceId, {
          from,
          pushName: pushName || null,
          text: text || null,
          media: media && { kind: media.kind as SandboxMediaKind, size: media.size },
          groupId: groupId || null,
        });
      } catch (error) {
        if (error instanceof SandboxNotInGroup) throw invalidArgument('invalid_group_id', error.message);
        throw conflict('not_connected', error instanceof Error ? error.message : 'The instance is not connected');
      }
    },
  };
};
