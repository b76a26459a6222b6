/**
 * The events of one message, on stream `<instance_id>.message.<message_id>` (outbound: our id; inbound: derived
 * from the platform's id). Appended by the sessions service; webhooks turn them into `message.*` deliveries.
 */
interface Event<T extends string, D extends Record<string, unknown>> {
  type: T;
  schemaVersion: number;
  occurredAt: string;
  data: D;
}

/** A location sent (type location). */
export interface MessageLocation {
  latitude: number;
  longitude: number;
  name: string | null;
}

/**
 * Content fields (`SEALED_FIELDS`) are sealed in the log; `erased: true` when they were erased (they then read null).
 */
export type MessageAccepted = Event<
  'MessageAccepted',
  {
    message_id: string;
    /** A number (international digits), or a group id (`…@g.us`) for send_group. */
    to: string;
    type: 'text' | 'media' | 'location' | 'contact' | 'reaction';
    text: string | null;
    media_url: string | null;
    filename: string | null;
    // Added with issue 16; absent from older events (read as null).
    /** A reply to this message of the instance (one sent or received). */
    quoted_message_id?: string | null;
    location?: MessageLocation | null;
    /** A contact card (type contact). */
    vcard?: string | null;
    /** A reaction (type reaction): the emoji, on this message of the instance. */
    reaction?: { message_id: string; emoji: string | null } | null;
    /** type media, sent as a voice note (a recorded voice message). Absent: a plain file (and in every older event). */
    voice_note?: boolean;
    erased?: boolean;
  }
>;
export type MessageSent = Event<'MessageSent', { message_id: string; to: string }>;
export type MessageDelivered = Event<'MessageDelivered', { message_id: string; to: string }>;
export type MessageRead = Event<'MessageRead', { message_id: string; to: string }>;
export type MessageFailed = Event<'MessageFailed', { message_id: string; to: string; reason: string }>;
export type MessageReceived = Event<
  'MessageReceived',
  {
    message_id: string;
    from: string;
    push_name: string | null;
    text: string | null;
    media: { mimetype: string; filename: string | null; size: number } | null;
    timestamp: string;
    // Added with issue 16; absent from older events.
    /** The platform's id of the message (what a reply or a reaction to it refers to). */
    platform_message_id?: string;
    /** A group message: the group's id (`…@g.us`); `from` is then the participant who wrote it. Null: a 1:1 chat. */
    group_id?: string | null;
    erased?: boolean;
  }
>;

export type MessageEvent = MessageAccepted | MessageSent | MessageDelivered | MessageRead | MessageFailed | MessageReceived;

export const messageStream = (instanceId: string, messageId: string): string => `${instanceId}.message.${messageId}`;
export const ALL_MESSAGES_PATTERN = '*.message.*';

export const messageEvent = <E extends MessageEvent>(type: E['type'], occurredAt: string, data: E['data']): E =>
  ({ type, schemaVersion: 1, occurredAt, data }) as E;

/** Every message event type (for filters and validation). */
export const MESSAGE_EVENT_TYPES: readonly MessageEvent['type'][] = [
  'MessageAccepted',
  'MessageSent',
  'MessageDelivered',
  'MessageRead',
  'MessageFailed',
  'MessageReceived',
];
