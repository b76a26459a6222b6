import { Agent } from 'node:https';
import makeWASocket, {
  makeCacheableSignalKeyStore,
  type AnyMessageContent,
  type BaileysEventMap,
  type BinaryNode,
  type Contact,
  type GroupMetadata,
  type WAPresence,
  type SocketConfig,
  type MiscMessageGenerationOptions,
  type proto,
  type UserFacingSocketConfig,
  type WAMessage,
  type WAMessageKey,
} from '@whiskeysockets/baileys';
import type { InstanceAuthState } from './kvAuthState';
import type { InstanceCaches } from './instanceCaches';
import type { BaileysOptions } from './options';

/** Baileys' logger interface (not exported by name). */
export type BaileysLogger = SocketConfig['logger'];

/** The events the adapter listens to. */
export type SocketEvent = 'connection.update' | 'creds.update' | 'messages.upsert' | 'messages.update' | 'message-receipt.update';

/** The server's acknowledgement of a message we sent (a raw node, on the socket's WebSocket). */
export const MESSAGE_ACK = 'CB:ack,class:message';

/** The part of a Baileys socket the adapter uses (so unit tests can hand in a fake one). */
export interface WaSocket {
  readonly ev: {
    on<T extends SocketEvent>(event: T, listener: (arg: BaileysEventMap[T]) => void): void;
    removeAllListeners<T extends SocketEvent>(event: T): void;
  };
  readonly ws: {
    on(event: typeof MESSAGE_ACK, listener: (node: BinaryNode) => void): unknown;
    on(event: 'error', listener: (error: Error) => void): unknown;
    off(event: typeof MESSAGE_ACK, listener: (node: BinaryNode) => void): unknown;
  };
  readonly user: Contact | undefined;
  /** Where Baileys 7 keeps what it learnt of LID ↔ phone-number pairs (usync, stanzas, history). */
  readonly signalRepository: { readonly lidMapping: { getPNForLID(lid: string): Promise<string | null> } };
  sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage | undefined>;
  /** Which of the numbers (as jids) have an account; the others are left out of the answer. */
  onWhatsApp(...jids: string[]): Promise<Array<{ jid: string; exists: boolean }> | undefined>;
  /** Every group the account takes part in, by id (one `w:g2` participating query). */
  groupFetchAllParticipating(): Promise<Record<string, GroupMetadata>>;
  /** A presence (`composing`, `paused`, …) to a chat. */
  sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void>;
  /** Sends read receipts for received messages (`read`, or `read-self` when the account hides its read receipts). */
  readMessages(keys: WAMessageKey[]): Promise<void>;
  /** Asks WhatsApp whether the account is restricted and until when; answered as a `reachoutTimeLock` connection update. */
  fetchAccountReachoutTimelock(): Promise<unknown>;
  /** Sends the pairing request for `phoneNumber` (digits) and answers the code to type on that phone. */
  requestPairingCode(phoneNumber: string): Promise<string>;
  logout(msg?: string): Promise<void>;
  end(error: Error | undefined): void;
}

export type SocketFactory = (config: UserFacingSocketConfig) => WaSocket;

export const defaultSocketFactory: SocketFactory = (config) => makeWASocket(config);

/** What a socket of one instance is made of. */
export interface SocketParts {
  options: BaileysOptions;
  auth: InstanceAuthState;
  caches: InstanceCaches;
  logger: BaileysLogger;
  /** The media upload agent; undefined for Node's default TLS checks. */
  fetchAgent: Agent | undefined;
  getMessage: (key: proto.IMessageKey) => Promise<proto.IMessage | undefined>;
}

/** Room for any upload on custom hosts (WhatsApp's own hosts announce their limit). */
const UPLOAD_LIMIT_BYTES = 2 ** 31;

/** A TLS agent for media uploads when the options ask for one (insecure, or a CA of their own). */
export const mediaAgentFor = (options: BaileysOptions): Agent | undefined => {
  if (options.mediaTlsInsecure) return new Agent({ rejectUnauthorized: false });
  if (options.mediaTlsCa) return new Agent({ ca: options.mediaTlsCa });
  return undefined;
};

/** The socket configuration of a gateway: offline on the phone, no history, the instance's caches and stores. */
export const socketConfig = ({ options, auth, caches, logger, fetchAgent, getMessage }: SocketParts): UserFacingSocketConfig => ({
  auth: { creds: auth.state.creds, keys: makeCacheableSignalKeyStore(auth.state.keys, logger, caches.signalKeys) },
  logger,
  printQRInTerminal: false,
  // Online, the phone stops notifying its user; the gateway must not silence the phone.
  markOnlineOnConnect: false,
  syncFullHistory: false,
  shouldSyncHistoryMessage: () => false,
  // The props, blocklist and privacy queries WhatsApp Web makes on connect: kept, so the client looks like one.
  fireInitQueries: true,
  getMessage,
  msgRetryCounterCache: caches.msgRetryCounter,
  userDevicesCache: caches.userDevices,
  callOfferCache: caches.callOffer,
  placeholderResendCache: caches.placeholderResend,
  fetchAgent,
  customUploadHosts: (options.uploadHosts ?? []).map((hostname) => ({ hostname, maxContentLengthBytes: UPLOAD_LIMIT_BYTES })),
  ...(options.webSocketUrl ? { waWebSocketUrl: options.webSocketUrl } : {}),
  ...(options.version ? { version: options.version } : {}),
  ...(options.browser ? { browser: options.browser } : {}),
  ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
  ...(options.qrTimeoutMs ? { qrTimeout: options.qrTimeoutMs } : {}),
});
