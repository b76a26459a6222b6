import type { proto } from '@whiskeysockets/baileys';
import type { RichContent } from './content';
import type { InboundFile } from './inboundMedia';

/**
 * How the emulator ends a client connection, and the `lastDisconnect` status code Baileys 6.17.16 reports:
 * - 'restart-required'    `<stream:error code="515"/>`                                → 515
 * - 'service-unavailable' `<stream:error code="503"/>`                                → 503
 * - 'replaced'            `<stream:error><conflict type="replaced"/></stream:error>`  → 440
 * - 'device-removed'      `<stream:error code="401"><conflict type="device_removed"/>` → 401 (device forgotten)
 * - 'bad-session'         `<stream:error><xml-not-well-formed/></stream:error>`       → 500
 * - 'logged-out'          `<failure reason="401"/>`                                   → 401 (device forgotten)
 * - 'forbidden'           `<failure reason="403"/>`                                   → 403
 * - 'client-outdated'     `<failure reason="405" location="frc"/>`                    → 405
 * - 'stream-end'          `<xmlstreamend/>`                                           → 428
 * - 'tcp-close'           the TCP connection dropped, no close frame                  → 428
 */
export type KickReason =
  | 'restart-required'
  | 'service-unavailable'
  | 'replaced'
  | 'device-removed'
  | 'bad-session'
  | 'logged-out'
  | 'forbidden'
  | 'client-outdated'
  | 'stream-end'
  | 'tcp-close';

/** Delays (ms, after the server ack) of the receipts the recipient "sends"; null: that receipt never comes. */
export interface ReceiptDelays {
  deliveryMs: number | null;
  readMs: number | null;
}

export interface WaEmulatorOptions {
  /** Seeds the QR refs (with the connection's number): the same seed gives the same refs run after run. Default 'wa-emulator'. */
  seed?: string;
  /** Refs in each `pair-device` (the real server sends about 6). The client rotates them every `qrTimeout`. Default 6. */
  qrRefCount?: number;
  /** Numbers a usync contact query reports as on WhatsApp (`type="in"`); others get `out`. Default: every number. */
  registered?: readonly string[] | ((number: string) => boolean);
  /** Automatic receipts for messages clients send. Default delivery after 10 ms, read after 20 ms. */
  receipts?: Partial<ReceiptDelays>;
  /** Logins announcing an older `[primary, secondary, tertiary]` version get `<failure reason="405"/>`. */
  minClientVersion?: readonly [number, number, number];
  /** A second login of a device replaces the first with `conflict type="replaced"` (440), as WhatsApp does. Default true. */
  replaceOnLogin?: boolean;
  /**
   * Pause before the first encrypted frame of a connection. Baileys starts using its transport keys without
   * awaiting their derivation (socket.js validateConnection), so a frame sent at once could be lost. Default 50.
   */
  settleMs?: number;
  /** Simultaneous client connections; more are refused with HTTP 503. Default 32. */
  maxConnections?: number;
  /** Messages kept for received() (oldest dropped first). Default 1,000. */
  maxReceived?: number;
  /** Largest accepted media upload, in bytes. Default 16 MiB (64 MiB stored in all). */
  maxUploadBytes?: number;
  /** Diagnostics (unhandled stanzas, decryption failures). Default: silent. */
  log?: (message: string, data?: Record<string, unknown>) => void;
}

export type ConnectionStage = 'handshake' | 'pairing' | 'logged-in' | 'closed';

/** A client connection as the emulator sees it. */
export interface ConnectionInfo {
  readonly id: number;
  readonly stage: ConnectionStage;
  /** The device jid once logged in (e.g. '15551234567:1@s.whatsapp.net'). */
  readonly jid: string | undefined;
  readonly number: string | undefined;
  /** The QR refs offered to this connection while unpaired. */
  readonly qrRefs: readonly string[];
}

/** A companion device paired through scan(); the emulator keeps it (and its keys) for its lifetime. */
export interface PairedDeviceInfo {
  readonly jid: string;
  readonly number: string;
  readonly deviceId: number;
  readonly lid: string;
  readonly connected: boolean;
}

/** Where to deliver, or whom to kick: a phone number (all its devices), a device jid, or a connection. */
export type Target = string | ConnectionInfo;

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

export interface ReceivedMedia {
  kind: MediaKind;
  mimetype: string | undefined;
  fileName: string | undefined;
  caption: string | undefined;
  url: string | undefined;
  directPath: string | undefined;
  fileLength: number;
  /** An audio message marked push-to-talk: the phone shows it as a recorded voice message. */
  ptt: boolean;
  /** What reached the media host, if the blob is there; `plaintext` when the message's mediaKey decrypts it. */
  upload: { directPath: string; encryptedBytes: number; plaintext: Buffer | undefined } | undefined;
}

/** A message a client sent, as the recipient's phone decrypted it. */
export interface ReceivedMessage {
  id: string;
  /** The sending companion, e.g. '15551234567:1@s.whatsapp.net'. */
  from: string;
  fromNumber: string;
  /** The chat it was sent to, e.g. '15557654321@s.whatsapp.net'. */
  to: string;
  toNumber: string;
  /** The decrypted content (deviceSentMessage unwrapped); undefined when decryption failed. */
  message: proto.IMessage | undefined;
  /** conversation, extendedTextMessage.text or a media caption. */
  text: string | undefined;
  media: ReceivedMedia | undefined;
  /** Location, contact card, reaction, reply (contextInfo), as the phone decrypted them. */
  rich: RichContent;
  error: string | undefined;
  at: number;
}

/** A receipt a client sent for a message it received (delivery: type 'inactive'/undefined; 'read'; …). */
export interface ClientReceipt {
  from: string;
  to: string;
  ids: string[];
  type: string | undefined;
  at: number;
}

/** A send the server refused (a nack): a restricted account's (463). */
export interface RefusedSend {
  id: string;
  fromNumber: string;
  to: string;
  error: string;
  at: number;
}

export interface WaEmulator {
  /** `ws://127.0.0.1:PORT/ws/chat`: Baileys' `waWebSocketUrl` (the connector's WA_WEBSOCKET_URL). */
  readonly url: string;
  /** `127.0.0.1:PORT` of the HTTPS media host: `customUploadHosts` (WA_MEDIA_UPLOAD_HOSTS). */
  readonly mediaHost: string;
  /** The media host's self-signed certificate, to trust it instead of disabling checks (WA_MEDIA_TLS_CA_FILE). */
  readonly mediaCaPem: string;
  /** The phone scans `qr` for `number`: pair-success, the companion's signature checked, then 515. */
  scan(qr: string, number: string): Promise<PairedDeviceInfo>;
  devices(): PairedDeviceInfo[];
  connections(): ConnectionInfo[];
  /** Resolves with the first connection (present or future) matching `predicate`. */
  waitForConnection(predicate: (connection: ConnectionInfo) => boolean, timeoutMs?: number): Promise<ConnectionInfo>;
  /** Messages clients sent, oldest first. */
  received(): ReceivedMessage[];
  /** Resolves with the first received message (present or future) matching `predicate`. */
  waitForReceived(predicate?: (message: ReceivedMessage) => boolean, timeoutMs?: number): Promise<ReceivedMessage>;
  clientReceipts(): ClientReceipt[];
  /**
   * `fromNumber`'s phone sends `text` to every device paired for `to` (a pkmsg on a new session); devices that are
   * offline get it at their next login, as an offline message. Resolves with the message id.
   */
  /** `viaLid`: from the sender's LID, with its number beside it (`sender_pn`), as WhatsApp addresses many chats now. */
  sendText(to: Target, fromNumber: string, pushName: string, text: string, options?: { viaLid?: boolean }): Promise<string>;
  /**
   * A group of `participants` (numbers; the first creates it): list_groups shows it to their companions. Answers its
   * id. `addressing: 'lid'` names members by LID (with their numbers beside), as WhatsApp does for most groups now.
   */
  createGroup(subject: string, participants: readonly string[], options?: { addressing?: 'pn' | 'lid' }): string;
  /**
   * `fromNumber`'s phone writes `text` in a group (its sender key in a pkmsg, the text in an skmsg) to every device of
   * `to`. In a LID group the author's number goes beside its LID (`participant_pn`) unless `withoutPn`.
   */
  sendGroupText(to: Target, groupId: string, fromNumber: string, pushName: string, text: string, options?: { withoutPn?: boolean }): Promise<string>;
  /** Typing indicators clients sent, oldest first. */
  chatStates(): ChatState[];
  /**
   * WhatsApp restricts `number`'s account: its sends are answered with a 463 nack (`refusals()`), and its timelock
   * query names the end. With `untilMs` (an end WhatsApp names) its connected devices are told at once, as WhatsApp
   * pushes a timelock notification; past that end the restriction is over.
   */
  restrict(number: string, options?: { untilMs?: number }): void;
  /** Lifts the restriction; connected devices get the timelock notification saying so. */
  unrestrict(number: string): void;
  /** The sends refused so far, oldest first. */
  refusals(): RefusedSend[];
  /** `fromNumber`'s phone sends a file: encrypted, stored on the loopback media host, its message carrying the key. */
  sendMedia(to: Target, fromNumber: string, pushName: string, file: InboundFile): Promise<string>;
  /** The pairing-code requests (companion_hello) clients sent, oldest first. */
  pairingRequests(): PairingRequest[];
  /** A receipt from `fromNumber` for a message the client sent it (for tests that turn automatic receipts off). */
  sendReceipt(to: Target, fromNumber: string, messageId: string, type: 'delivery' | 'read' | 'played'): void;
  /** While unreachable, every new WebSocket is dropped at once (WhatsApp down, or no route to it). */
  setReachable(reachable: boolean): void;
  /** Ends the target's connection(s) the given way; resolves once they are closed. */
  kick(target: Target, reason: KickReason): Promise<void>;
  /** Closes every connection and both servers; clears all timers. */
  stop(): Promise<void>;
}

/** A typing indicator a client sent (`composing`, `paused`, …) to a chat. */
export interface ChatState {
  from: string;
  to: string;
  state: string;
  at: number;
}

/** A client asked to be linked by pairing code to `number` (Baileys' requestPairingCode). */
export interface PairingRequest {
  connectionId: number;
  number: string;
  at: number;
}
