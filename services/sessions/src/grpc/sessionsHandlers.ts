import {
  assertGroupId,
  assertInstanceId,
  invalidArgument,
  isPhoneNumber,
  LIMITS,
  unaryHandler,
  type Logger,
  type HandlersWithoutCall,
  type SessionsHandlers,
} from '@wagw/lib';
import type { MessagesService } from '../application/messagesService';
import type { OwnerOps } from '../ownership/ownerRouter';
import { sendCommandOf } from './sendCommand';

/**
 * Maps the gRPC contract onto the sessions use cases; instance operations run on the instance's owning replica.
 * `Call` is served from the unary handlers by startGrpcServer.
 */
export const sessionsHandlers = (owner: OwnerOps, messages: MessagesService, qrWaitMs: number, logger: Logger): HandlersWithoutCall<SessionsHandlers> => ({
  GetQr: unaryHandler(logger, 'GetQr', async (r) => {
    assertInstanceId(r.instanceId);
    return { qr: await owner.getQr(r.instanceId, Math.min(r.waitMs || qrWaitMs, 60_000)) };
  }),
  GetPairingCode: unaryHandler(logger, 'GetPairingCode', async (r) => {
    assertInstanceId(r.instanceId);
    if (!isPhoneNumber(r.number)) throw invalidArgument('invalid_number', 'number must be 7 to 15 international digits without +');
    return { code: await owner.getPairingCode(r.instanceId, r.number, Math.min(r.waitMs || qrWaitMs, 60_000)) };
  }),
  CheckNumbers: unaryHandler(logger, 'CheckNumbers', async (r) => {
    assertInstanceId(r.instanceId);
    if (r.numbers.length === 0 || r.numbers.length > LIMITS.numbersPerCheck) {
      throw invalidArgument('invalid_numbers', `numbers must hold 1 to ${LIMITS.numbersPerCheck} numbers`);
    }
    const bad = r.numbers.find((number) => !isPhoneNumber(number));
    if (bad !== undefined) throw invalidArgument('invalid_number', `every number must be 7 to 15 international digits without +, got '${bad}'`);
    const results = await owner.checkNumbers(r.instanceId, r.numbers);
    return { results: results.map(({ number, exists, jid }) => ({ number, exists, jid: jid ?? '' })) };
  }),
  ListGroups: unaryHandler(logger, 'ListGroups', async (r) => {
    assertInstanceId(r.instanceId);
    return { groups: await owner.listGroups(r.instanceId) };
  }),
  Reconnect: unaryHandler(logger, 'Reconnect', async (r) => {
    assertInstanceId(r.instanceId);
    await owner.reconnect(r.instanceId);
    return { success: true };
  }),
  Send: unaryHandler(logger, 'Send', async (r) => ({ messageId: await messages.accept(sendCommandOf(r)) })),
  SandboxScan: unaryHandler(logger, 'SandboxScan', async (r) => {
    assertInstanceId(r.instanceId);
    await owner.sandboxScan(r.instanceId, r.number);
    return { success: true };
  }),
  SandboxInbound: unaryHandler(logger, 'SandboxInbound', async (r) => {
    assertInstanceId(r.instanceId);
    if (r.groupId) assertGroupId(r.groupId);
    await owner.sandboxInbound(r.instanceId, r.from, r.pushName, r.text, r.groupId);
    return { success: true };
  }),
  SendUsage: unaryHandler(logger, 'SendUsage', async (r) => {
    assertInstanceId(r.instanceId);
    return messages.sendUsage(r.instanceId);
  }),
});
