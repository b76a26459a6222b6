import { assertInstanceId, conflict, unaryHandler, type Logger, type SessionsHandlers } from '@wagw/lib';
import type { MessagesService } from '../application/messagesService';
import type { SandboxPlatform } from '../connector/sandbox';
import type { SessionManager } from '../session/sessionManager';

/** Maps the gRPC contract onto the sessions use cases. */
export const sessionsHandlers = (
  sessions: SessionManager,
  messages: MessagesService,
  sandbox: SandboxPlatform | null,
  qrWaitMs: number,
  logger: Logger,
): SessionsHandlers => {
  const sandboxOnly = (): SandboxPlatform => {
    if (!sandbox) throw conflict('sandbox_only', 'This works only with the sandbox connector (WA_CONNECTOR=sandbox)');
    return sandbox;
  };
  return {
    GetQr: unaryHandler(logger, 'GetQr', async (r) => {
      assertInstanceId(r.instanceId);
      return { qr: await sessions.getQr(r.instanceId, Math.min(r.waitMs || qrWaitMs, 60_000)) };
    }),
    Reconnect: unaryHandler(logger, 'Reconnect', async (r) => {
      assertInstanceId(r.instanceId);
      await sessions.reconnect(r.instanceId);
      return { success: true };
    }),
    Send: unaryHandler(logger, 'Send', async (r) => ({
      messageId: await messages.accept({
        account: r.account,
        instanceId: r.instanceId,
        to: r.to,
        type: r.type,
        text: r.text,
        mediaUrl: r.mediaUrl,
        filename: r.filename,
        idempotencyKey: r.idempotencyKey,
      }),
    })),
    SandboxScan: unaryHandler(logger, 'SandboxScan', async (r) => {
      try {
        sandboxOnly().scan(r.instanceId, r.number);
      } catch (error) {
        throw conflict('no_qr_waiting', error instanceof Error ? error.message : 'No QR code is waiting to be scanned');
      }
      return { success: true };
    }),
    SandboxInbound: unaryHandler(logger, 'SandboxInbound', async (r) => {
      try {
        sandboxOnly().inject(r.instanceId, { from: r.from, pushName: r.pushName || null, text: r.text, media: null });
      } catch (error) {
        throw conflict('not_connected', error instanceof Error ? error.message : 'The instance is not connected');
      }
      return { success: true };
    }),
  };
};
