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
}

export interface OutboundMessage {
  /** Our message id; receipts refer to it. */
  messageId: string;
  /** Recipient number: international digits, no '+'. */
  to: string;
  text?: string;
  media?: MediaPayload;
}

export interface InboundMessage {
  platformMessageId: string;
  from: string;
  pushName: string | null;
  text: string | null;
  media: { mimetype: string; filename: string | null; size: number } | null;
  timestamp: string;
}

/** Whether a number has an account on the platform, and its id there when it does. */
export interface NumberCheck {
  number: string;
  exists: boolean;
  jid: string | null;
}

export type ReceiptStatus = 'sent' | 'delivered' | 'read' | 'failed';

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
  | { type: 'receipt'; messageId: string; status: ReceiptStatus; reason?: string }
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
  /** Unlinks the device from the account, then closes. */
  logout(): Promise<void>;
  /** Closes the connection (no further events), keeping the link. */
  close(): Promise<void>;
}

export interface Connector {
  readonly name: string;
  connect(instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection>;
  /** Wipes what is stored for the instance (credentials, keys): its next connection starts unlinked, with a QR code. */
  purge(instanceId: string): Promise<void>;
  /** Erasure: drops the content of the instance's sent messages that the adapter keeps (the link and the ids stay). */
  forgetContent(instanceId: string): Promise<void>;
}
