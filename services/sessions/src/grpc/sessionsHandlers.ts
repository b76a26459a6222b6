import {
  assertGroupId,
  assertInboundMessageId,
  assertInstanceId,
  exceedsCharacters,
  invalidArgument,
  isPhoneNumber,
  LIMITS,
  serverStreamHandler,
  unaryHandler,
  type Logger,
  type HandlersWithoutCall,
  type MediaChunk,
  type SessionsHandlers,
} from '@wagw/lib';
import { QR_WAIT_MAX_MS } from '../config';
import type { MessagesService } from '../application/messagesService';
import { SANDBOX_MEDIA_MAX_BYTES } from '../connector/sandbox/sandboxMedia';
import type { MediaDownload } from '../connector/port';
import type { OwnerOps } from '../ownership/ownerRouter';
import { sendCommandOf } from './sendCommand';

/** What any replica answers about received messages (no connection needed). */
export interface InboundMediaOps {
  /** One of the files this replica may hold at once, or a 429 when none is free; the function returned gives it back. */
  reserve(): () => void;
  getMedia(instanceId: string, messageId: string): Promise<MediaDownload>;
}

/** Bytes per media chunk: well under gRPC's 4 MiB message default, and a few of them fill HTTP/2's window. */
export const MEDIA_CHUNK_BYTES = 64 * 1024;

/** The file as StreamMedia sends it: its head, then its bytes in views of the one buffer (no copies). */
export function* mediaChunks({ data, mimetype, filename }: MediaDownload): Generator<MediaChunk> {
  yield { mimetype, filename: filename ?? '', size: data.length };
  for (let at = 0; at < data.length; at += MEDIA_CHUNK_BYTES) yield { data: data.subarray(at, at + MEDIA_CHUNK_BYTES) };
}

/**
 * Maps the gRPC contract onto the sessions use cases; instance operations run on the instance's owning replica.
 * `Call` is served from the unary handlers by startGrpcServer.
 */
export const sessionsHandlers = (
  owner: OwnerOps,
  messages: MessagesService,
  inbound: InboundMediaOps,
  qrWaitMs: number,
  logger: Logger,
): HandlersWithoutCall<SessionsHandlers> => ({
  GetQr: unaryHandler(logger, 'GetQr', async (r) => {
    assertInstanceId(r.instanceId);
    return { qr: await owner.getQr(r.instanceId, Math.min(r.waitMs || qrWaitMs, QR_WAIT_MAX_MS)) };
  }),
  GetPairingCode: unaryHandler(logger, 'GetPairingCode', async (r) => {
    assertInstanceId(r.instanceId);
    if (!isPhoneNumber(r.number)) throw invalidArgument('invalid_number', 'number must be 7 to 15 international digits without +');
    return { code: await owner.getPairingCode(r.instanceId, r.number, Math.min(r.waitMs || qrWaitMs, QR_WAIT_MAX_MS)) };
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
    if (!isPhoneNumber(r.from)) throw invalidArgument('invalid_number', 'from must be 7 to 15 international digits without +');
    if (!r.text && !r.mediaKind) throw invalidArgument('invalid_inbound', 'Give text, media, or both');
    if (exceedsCharacters(r.text, LIMITS.text)) throw invalidArgument('invalid_text', `text holds at most ${LIMITS.text} characters`);
    if (r.mediaSize > SANDBOX_MEDIA_MAX_BYTES) throw invalidArgument('invalid_media_size', `media_size is at most ${SANDBOX_MEDIA_MAX_BYTES} bytes`);
    const media = r.mediaKind ? { kind: r.mediaKind, size: r.mediaSize } : null;
    await owner.sandboxInbound(r.instanceId, { from: r.from, pushName: r.pushName, text: r.text, media, groupId: r.groupId });
    return { success: true };
  }),
  SandboxRestrict: unaryHandler(logger, 'SandboxRestrict', async (r) => {
    assertInstanceId(r.instanceId);
    await owner.sandboxRestrict(r.instanceId, r.seconds > 0 ? Date.now() + r.seconds * 1000 : null, r.lift);
    return { success: true };
  }),
  MarkRead: unaryHandler(logger, 'MarkRead', async (r) => {
    assertInstanceId(r.instanceId);
    assertInboundMessageId(r.messageId);
    await owner.markRead(r.instanceId, r.messageId);
    return { success: true };
  }),
  StreamMedia: serverStreamHandler(logger, 'StreamMedia', async (r) => {
    assertInstanceId(r.instanceId);
    assertInboundMessageId(r.messageId);
    // Fetched and checked whole first (WhatsApp's MAC covers the whole file): a failure is the call's status. The file
    // holds its slot until the stream ends (its reader done, gone or failed).
    const release = inbound.reserve();
    try {
      return { frames: mediaChunks(await inbound.getMedia(r.instanceId, r.messageId)), close: async () => release() };
    } catch (error) {
      release();
      throw error;
    }
  }),
  SendUsage: unaryHandler(logger, 'SendUsage', async (r) => {
    assertInstanceId(r.instanceId);
    return messages.sendUsage(r.instanceId);
  }),
});
