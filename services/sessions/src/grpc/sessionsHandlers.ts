import { assertInstanceId, unaryHandler, type Logger, type SessionsHandlers } from '@wagw/lib';
import type { MessagesService } from '../application/messagesService';
import type { OwnerOps } from '../ownership/ownerRouter';
import { sendStreamHandler } from './sendStreamHandler';

/** Maps the gRPC contract onto the sessions use cases; instance operations run on the instance's owning replica. */
export const sessionsHandlers = (owner: OwnerOps, messages: MessagesService, qrWaitMs: number, logger: Logger): SessionsHandlers => ({
  GetQr: unaryHandler(logger, 'GetQr', async (r) => {
    assertInstanceId(r.instanceId);
    return { qr: await owner.getQr(r.instanceId, Math.min(r.waitMs || qrWaitMs, 60_000)) };
  }),
  Reconnect: unaryHandler(logger, 'Reconnect', async (r) => {
    assertInstanceId(r.instanceId);
    await owner.reconnect(r.instanceId);
    return { success: true };
  }),
  SendStream: sendStreamHandler(messages, logger),
  SandboxScan: unaryHandler(logger, 'SandboxScan', async (r) => {
    assertInstanceId(r.instanceId);
    await owner.sandboxScan(r.instanceId, r.number);
    return { success: true };
  }),
  SandboxInbound: unaryHandler(logger, 'SandboxInbound', async (r) => {
    assertInstanceId(r.instanceId);
    await owner.sandboxInbound(r.instanceId, r.from, r.pushName, r.text);
    return { success: true };
  }),
  SendUsage: unaryHandler(logger, 'SendUsage', async (r) => {
    assertInstanceId(r.instanceId);
    return messages.sendUsage(r.instanceId);
  }),
});
