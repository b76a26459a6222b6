import { Type, type Static, type TObject } from '@fastify/type-provider-typebox';
import type { preValidationHookHandler } from 'fastify';
import { assertVcardSize, idempotencyKeyOf, invalidArgument, LIMITS, SEND_CONTENT_LIMITS, SEND_TYPES, type SendRequest } from '@wagw/lib';
import { MAX_URL_LENGTH } from '../plugins/limits';
import type { SessionsClientApi } from '../sessionsClient';
import { AccessToken, COMMON_ERRORS, envelope, errorResponses, InstanceId } from '../schemas';
import { conflictResponse } from '../responseDocs';

/**
 * The content fields `send` and `send_group` share. Ranges and forms are checked by the sessions service (one set of
 * rules for HTTP and gRPC callers), so each fault answers its own code (invalid_latitude, invalid_emoji, ...) rather
 * than the schema's generic invalid_request.
 */
export const sendContentFields = {
  type: Type.Union(
    SEND_TYPES.map((t) => Type.Literal(t)),
    { description: 'text (message), media (media_url), location (latitude, longitude), contact (vcard), reaction (message_id, emoji)' },
  ),
  message: Type.Optional(Type.String({ maxLength: LIMITS.text, description: 'Text; for media, the caption' })),
  media_url: Type.Optional(
    Type.String({
      maxLength: LIMITS.url,
      description: 'http(s) URL of the media (type media); no user name or password, no port 0 (400 invalid_media_url otherwise)',
    }),
  ),
  filename: Type.Optional(Type.String({ maxLength: LIMITS.filename, description: 'Names a document (type media)' })),
  quoted_message_id: Type.Optional(
    Type.String({
      maxLength: SEND_CONTENT_LIMITS.messageId,
      description: 'A reply: the message_id of a message of this instance in the same chat (one it sent or received); 404 message_not_found otherwise',
      examples: ['in_4b1d0c3e2f5a6b7c8d9e0f1a'],
    }),
  ),
  latitude: Type.Optional(Type.Number({ description: 'type location: degrees, -90 to 90 (400 invalid_latitude otherwise)', examples: [52.5163] })),
  longitude: Type.Optional(Type.Number({ description: 'type location: degrees, -180 to 180 (400 invalid_longitude otherwise)', examples: [13.3777] })),
  name: Type.Optional(Type.String({ maxLength: SEND_CONTENT_LIMITS.locationName, description: "type location: the place's name" })),
  // No card of more characters than the cap's bytes fits in it (a character is 1-4 bytes): the schema states the cap
  // as its maxLength, and vcardSizeFirst answers vcard_too_large before this schema sees a card over it.
  vcard: Type.Optional(
    Type.String({
      maxLength: SEND_CONTENT_LIMITS.vcardBytes,
      description: `type contact: a vCard (BEGIN:VCARD … END:VCARD), at most ${SEND_CONTENT_LIMITS.vcardBytes} bytes in UTF-8 (400 vcard_too_large beyond). In the query form the whole URL must stay within 8 KiB (${MAX_URL_LENGTH} characters, 414 url_too_long beyond), percent-encoding included (a line break is %0A): send larger cards with POST`,
    }),
  ),
  message_id: Type.Optional(
    Type.String({
      maxLength: SEND_CONTENT_LIMITS.messageId,
      description: 'type reaction: the message_id reacted to (a message of this instance in the same chat)',
    }),
  ),
  emoji: Type.Optional(Type.String({ maxLength: 64, description: 'type reaction: exactly one emoji (one grapheme: 👍, 👍🏽, 👨‍👩‍👧); 400 invalid_emoji otherwise' })),
  voice_note: Type.Optional(
    Type.Boolean({
      description:
        'type media: send the audio as a voice note (a recorded voice message; OGG/Opus plays on every phone), without message (400 invalid_voice_note). A file that is not audio fails the send: MessageFailed media_not_audio',
    }),
  ),
  instance_id: InstanceId,
  access_token: AccessToken,
};

/** The recipient field of each send route, and the route that takes the other one. */
const RECIPIENTS = { number: { route: 'send', other: 'group_id' }, group_id: { route: 'send_group', other: 'number' } } as const;

/**
 * The checks of a send route's raw input before its schema's, for faults with codes of their own:
 * - the other route's recipient (`group_id` on send, `number` on send_group): 400 invalid_recipient. The schema would
 *   drop it as an unknown field, and the message would go to the one recipient left, maybe not the one meant;
 * - a vCard over its cap: 400 vcard_too_large before the schema's generic invalid_request (the same answer as a card
 *   within maxLength characters but over the cap in bytes, and as gRPC callers get from the sessions service).
 * Anything but a string vCard is left to the schema. Callback style, not async: it runs on every send, and an async
 * hook costs each request a promise and a turn of the microtask queue.
 */
export const sendInputFirst =
  (recipient: keyof typeof RECIPIENTS): preValidationHookHandler =>
  (request, _reply, done) => {
    const input = request.method === 'GET' ? request.query : request.body;
    const fields: Record<string, unknown> = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
    const { route, other } = RECIPIENTS[recipient];
    try {
      if (fields[other] !== undefined) {
        const otherRoute = RECIPIENTS[other].route;
        throw invalidArgument(
          'invalid_recipient',
          `${route} takes ${recipient}, not ${other}: a message to a ${other === 'number' ? 'number' : 'group'} goes to ${otherRoute}`,
        );
      }
      if (typeof fields.vcard === 'string') assertVcardSize(fields.vcard);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  };

export type SendContentInput = Static<TObject<typeof sendContentFields>>;

export const SendResponse = {
  200: envelope({ message_id: Type.String() }, { message: 'Message accepted for sending', message_id: 'm_3a1f09c2b7d4e6f8a0b1c2d3e4f5a6b7' }),
  ...errorResponses(...COMMON_ERRORS, 404),
  ...conflictResponse(['not_linked', 'instance_logged_out_on_phone', 'message_not_sent', 'idempotency_key_reused']),
};

export const SEND_DESCRIPTION =
  'Accepts the message for sending and answers its message_id at once; it is durable from then on. Delivery progress (sent, delivered, read, failed) arrives on the webhook and in the history. While the instance is disconnected, sends wait (up to 24 h). With an Idempotency-Key header, a repeat answers the same message_id and sends nothing new; the key used again for another message answers 409 idempotency_key_reused.';

/** One send (to a number or a group): the sessions service validates, checks ownership and appends MessageAccepted. */
export const sendTo = async (
  sessions: SessionsClientApi,
  account: string,
  recipient: { to: string } | { groupId: string },
  fields: SendContentInput,
  headers: Record<string, unknown>,
) => {
  const location =
    fields.latitude !== undefined && fields.longitude !== undefined
      ? { latitude: fields.latitude, longitude: fields.longitude, name: fields.name ?? '' }
      : null;
  const request: SendRequest = {
    account,
    instanceId: fields.instance_id,
    to: 'to' in recipient ? recipient.to : '',
    groupId: 'groupId' in recipient ? recipient.groupId : '',
    type: fields.type,
    text: fields.message ?? '',
    mediaUrl: fields.media_url ?? '',
    filename: fields.filename ?? '',
    quotedMessageId: fields.quoted_message_id ?? '',
    location,
    vcard: fields.vcard ?? '',
    reactionMessageId: fields.message_id ?? '',
    emoji: fields.emoji ?? '',
    voiceNote: fields.voice_note ?? false,
    idempotencyKey: idempotencyKeyOf(headers) ?? '',
  };
  const { messageId } = await sessions.send(request);
  return { status: 200, message: 'Message accepted for sending', message_id: messageId };
};
