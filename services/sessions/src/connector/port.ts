/**
 * The connector port: how the sessions service reaches a messaging platform. Adapters: `sandbox` (a simulated
 * platform, a product feature) and, later, `baileys` (WhatsApp Web). No library type crosses this port.
 */

export interface MediaPayload {
  data: Buffer;
  mimetype: string;
  /** Names documents. */
  filename?: string;
  caption?: string;
  /** Audio sent as a voice note (a recorded voice message, no caption). */
  voiceNote?: boolean;
}

/**
 * A message of the instance's history that a send refers to (a reply quotes it, a reaction is on it): one we sent
 * (`fromMe`, by our message id: the adapter knows its platform id) or one received (by the platform's id).
 */
export interface MessageRef {
  fromMe: boolean;
  /** Ours: our message id; received: the platform's id. */
  id: string;
  /** The chat it is in: a number, or a group id (`…@g.us`). */
  chat: string;
  /** Who wrote a received group message (a number); null otherwise. */
  participant: string | null;
  /** Its text (a quote shows it); null for other content. */
  text: string | null;
}

export interface OutboundMessage {
  /** Our message id; receipts refer to it. */
  messageId: string;
  /** Recipient: a number (international digits, no '+') or a group id (`…@g.us`). */
  to: string;
  text?: string;
  media?: MediaPayload;
  location?: { latitude: number; longitude: number; name: string | null };
  contact?: { vcard: string; displayName: string };
  reaction?: { target: MessageRef; emoji: string };
  /** A reply: the message quoted. */
  quoted?: MessageRef;
}

/** A group the account takes part in. */
export interface GroupInfo {
  id: string;
  subject: string;
  participants: number;
}

export interface InboundMessage {
  platformMessageId: string;
  /** The sender's number; in a group, the participant who wrote. */
  from: string;
  /** A group message: the group's id (`…@g.us`); absent or null for a 1:1 message. */
  groupId?: string | null;
  pushName: string | null;
  text: string | null;
  media: { mimetype: string; filename: string | null; size: number } | null;
  timestamp: string;
  /**
   * What the adapter needs to act on the message later (mark it read, download its media), in a form only it reads.
   * Kept by the sessions service beside the message, never in the event log (it may hold media keys).
   */
  ref: string;
}

/** Received media, decrypted. */
export interface MediaDownload {
  data: Buffer;
  mimetype: string;
  filename: string | null;
}

/** Why received media cannot be had; `MediaUnavailable.reason`. */
export type MediaUnavailableReason = 'no_media' | 'too_large' | 'expired' | 'failed';

/** Received media that cannot be had (none in the message, over the size cap, gone from the platform, a failed fetch). */
export class MediaUnavailable extends Error {
  constructor(
    readonly reason: MediaUnavailableReason,
    message: string,
  ) {
    super(message);
    this.name = 'MediaUnavailable';
  }
}

/** Whether a number has an account on the platform, and its id there when it does. */
export interface NumberCheck {
  number: string;
  exists: boolean;
  jid: string | null;
}

export type ReceiptStatus = 'sent' | 'delivered' | 'read' | 'failed';

/** The `failed` receipt's reason for a send refused because the account is restricted (both adapters). */
export const ACCOUNT_RESTRICTED = 'account_restricted';

/** The `failed` receipt's reason for a recipient without an account on the platform (both adapters). */
export const RECIPIENT_NOT_ON_PLATFORM = 'recipient_not_on_platform';

/** What a connection reports; the session turns these into events. QR strings are secrets: never log or store them. */
export type ConnectionEvent =
  | { type: 'qr'; qr: string }
  | { type: 'connected'; number: string }
  /** Lost, and the adapter will not reconnect by itself: the session decides (backoff policy). */
  | { type: 'disconnected'; reason: string }
  | { type: 'logged_out'; reason: string }
  | { type: 'failed'; reason: string }
  | {
      type: 'receipt';
      messageId: string;
      status: ReceiptStatus;
      reason?: string;
      /** Called once the receipt is recorded: a platform that keeps what it owes (the sandbox on KV) forgets it only then. */
      stored?: () => void;
    }
  /** The platform refuses the account's sends (WhatsApp's 463); `until` (ISO time) when it said when that ends. */
  | { type: 'restricted'; until: string | null }
  /** The platform accepts the account's sends again. */
  | { type: 'unrestricted' }
  | { type: 'inbound'; message: InboundMessage };

export interface Connection {
  /** Hands a message to the platform; resolves once the platform took it (a 'sent' receipt follows). */
  send(message: OutboundMessage): Promise<void>;
  /**
   * Asks for a pairing code for `number` (international digits): typed on that phone (Linked devices, link with
   * phone number), it links the instance as a QR scan would. Only while the connection shows QR codes.
   */
  requestPairingCode(number: string): Promise<string>;
  /** Which of the numbers (international digits) have an account; only while connected. */
  checkNumbers(numbers: readonly string[]): Promise<NumberCheck[]>;
  /** The groups the account takes part in; only while connected. */
  listGroups(): Promise<GroupInfo[]>;
  /**
   * Shows `to` (a number or a group id) that the account is typing (`composing`) or stopped (`paused`); only while
   * connected. A courtesy: the send does not depend on it.
   */
  setTyping(to: string, typing: boolean): Promise<void>;
  /** Tells the sender the message (an inbound one, by its `ref`) was read: blue ticks on their phone. */
  markRead(ref: string): Promise<void>;
  /** Unlinks the device from the account, then closes. */
  logout(): Promise<void>;
  /** Closes the connection (no further events), keeping the link. */
  close(): Promise<void>;
}

export interface Connector {
  readonly name: string;
  connect(instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection>;
  /**
   * The decrypted media of an inbound message (by its `ref`), refused beyond `maxBytes`. Needs no connection: any
   * replica fetches it from the platform's media hosts. Throws `MediaUnavailable` for what the caller should hear.
   */
  downloadMedia(ref: string, maxBytes: number): Promise<MediaDownload>;
  /** Wipes what is stored for the instance (credentials, keys): its next connection starts unlinked, with a QR code. */
  purge(instanceId: string): Promise<void>;
  /**
   * Erasure: drops the content of the instance's sent messages that the adapter keeps (the link and the ids stay), of
   * the sends stored before `before` (ms since the epoch; an erasure replayed later must not reach newer sends).
   */
  forgetContent(instanceId: string, before: number): Promise<void>;
}
