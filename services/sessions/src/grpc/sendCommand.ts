import type { SendRequestMessage } from '@wagw/lib';
import type { SendCommand } from '../application/messagesService';

/** A SendRequest as MessagesService.accept takes it (proto3 leaves absent strings '' and an absent location null). */
export const sendCommandOf = (request: SendRequestMessage): SendCommand => ({
  account: request.account,
  instanceId: request.instanceId,
  to: request.to,
  groupId: request.groupId,
  type: request.type,
  text: request.text,
  mediaUrl: request.mediaUrl,
  filename: request.filename,
  idempotencyKey: request.idempotencyKey,
  quotedMessageId: request.quotedMessageId,
  location: request.location ? { latitude: request.location.latitude, longitude: request.location.longitude, name: request.location.name || null } : null,
  vcard: request.vcard,
  reactionMessageId: request.reactionMessageId,
  emoji: request.emoji,
  voiceNote: request.voiceNote,
});
