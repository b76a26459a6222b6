import { createHash } from 'node:crypto';
import { Curve, jidDecode, type BinaryNode, type KeyPair } from '@whiskeysockets/baileys';
import { Groups } from './groupStore';
import { Restrictions } from './restrictions';
import { FakeUser, type UploadedKeys } from './signal';
import { Timers, Waiters } from './timing';
import type {
  ChatState,
  ClientReceipt,
  PairingRequest,
  ConnectionInfo,
  KickReason,
  PairedDeviceInfo,
  ReceiptDelays,
  ReceivedMessage,
  RefusedSend,
  WaEmulatorOptions,
} from './types';

/** A live client connection, as the rest of the emulator drives it. */
export interface DeviceLink {
  readonly info: ConnectionInfo;
  /** Logged in and past `success`: stanzas can go to it. */
  readonly ready: boolean;
  send(node: BinaryNode): boolean;
  kick(reason: KickReason): Promise<void>;
}

export interface PairedDevice {
  jid: string;
  number: string;
  deviceId: number;
  lid: string;
  /** The client's static Noise key: a login must come with it. */
  noiseKey: Buffer;
  keys: UploadedKeys;
  /** The phone has shared an app-state key and the client has synced (see connection.ts, bootstrap). */
  appStateReady: boolean;
  link: DeviceLink | undefined;
  /** Messages for it while it was away, delivered as offline messages at its next login. */
  offline: BinaryNode[];
}

export type ResolvedOptions = Required<Omit<WaEmulatorOptions, 'seed' | 'registered' | 'receipts' | 'minClientVersion' | 'log'>> & {
  minClientVersion: readonly [number, number, number] | undefined;
  log: (message: string, data?: Record<string, unknown>) => void;
};

export const MAX_OFFLINE_PER_DEVICE = 100;
const MAX_USERS = 10_000;
const MAX_RECEIPTS = 1_000;
export const USER_SERVER = 's.whatsapp.net';
export const LID_SERVER = 'lid';

/** A stable fake LID user per number (15 digits), as WhatsApp gives every account one. */
const lidUserOf = (number: string): string => {
  const value = BigInt(`0x${createHash('sha256').update(`lid/${number}`).digest('hex').slice(0, 15)}`);
  return (100_000_000_000_000n + (value % 900_000_000_000_000n)).toString();
};

/** Digits of a number or jid: '+1 555…', '15551234567@s.whatsapp.net', '15551234567:3@…' → '15551234567'. */
export const numberOf = (numberOrJid: string): string => (numberOrJid.split(/[:@]/, 1)[0] ?? '').replace(/\D/g, '');

/** Everything the emulator knows, for its lifetime: phones, paired devices, connections, what clients sent. */
export class Registry {
  readonly devices = new Map<string, PairedDevice>();
  readonly timers = new Timers();
  readonly receivedWaiters = new Waiters<ReceivedMessage>('received message');
  readonly connectionWaiters = new Waiters<ConnectionInfo>('connection');
  readonly receipts: ReceiptDelays;
  readonly groups = new Groups();
  private readonly chatStateLog: ChatState[] = [];
  /** Numbers whose sends are refused with 463 (`restrict`). */
  readonly restrictions = new Restrictions();
  private readonly users = new Map<string, FakeUser>();
  private readonly accounts = new Map<string, KeyPair>();
  private readonly lastDeviceId = new Map<string, number>();
  /** LID user → number, for every number whose LID was handed out. */
  private readonly numbersByLid = new Map<string, string>();
  private readonly receivedLog: ReceivedMessage[] = [];
  private readonly receiptLog: ClientReceipt[] = [];
  private readonly pairingLog: PairingRequest[] = [];
  private readonly refusalLog: RefusedSend[] = [];
  private messageSequence = 0;

  constructor(
    readonly options: ResolvedOptions,
    private readonly registered: WaEmulatorOptions['registered'],
    receipts: ReceiptDelays,
  ) {
    this.receipts = receipts;
  }

  /** The phone (device 0) of a number: created on first use, then kept. */
  user(number: string): FakeUser {
    let user = this.users.get(number);
    if (!user) {
      if (this.users.size >= MAX_USERS) throw new Error(`the emulator plays at most ${MAX_USERS} numbers`);
      user = new FakeUser(number);
      this.users.set(number, user);
    }
    return user;
  }

  /** The account (ADV) signing key of a number's phone. */
  account(number: string): KeyPair {
    let account = this.accounts.get(number);
    if (!account) {
      account = Curve.generateKeyPair();
      this.accounts.set(number, account);
    }
    return account;
  }

  /** The LID user of a number (remembered, so a jid on the lid server maps back to it). */
  lidOf(number: string): string {
    const lid = lidUserOf(number);
    this.numbersByLid.set(lid, number);
    return lid;
  }

  /** The number and device a jid addresses, on the phone-number or the lid server ('' when a LID is unknown). */
  addressOf(jid: string): { number: string; device: number } {
    const decoded = jidDecode(jid);
    const user = decoded?.user ?? '';
    const number = decoded?.server === LID_SERVER ? (this.numbersByLid.get(user) ?? '') : numberOf(user);
    return { number, device: decoded?.device ?? 0 };
  }

  allocateDeviceId(number: string): number {
    const id = (this.lastDeviceId.get(number) ?? 0) + 1;
    this.lastDeviceId.set(number, id);
    return id;
  }

  devicesOf(number: string): PairedDevice[] {
    return [...this.devices.values()].filter((device) => device.number === number);
  }

  isRegistered(number: string): boolean {
    if (this.registered === undefined) return true;
    if (typeof this.registered === 'function') return this.registered(number);
    return this.registered.includes(number);
  }

  nextMessageId(): string {
    this.messageSequence += 1;
    return `3A${this.messageSequence.toString(16).toUpperCase().padStart(18, '0')}`;
  }

  addReceived(message: ReceivedMessage): void {
    this.receivedLog.push(message);
    if (this.receivedLog.length > this.options.maxReceived) this.receivedLog.shift();
    this.receivedWaiters.notify(message);
  }

  received(): ReceivedMessage[] {
    return [...this.receivedLog];
  }

  addReceipt(receipt: ClientReceipt): void {
    this.receiptLog.push(receipt);
    if (this.receiptLog.length > MAX_RECEIPTS) this.receiptLog.shift();
  }

  addRefusal(refusal: RefusedSend): void {
    this.refusalLog.push(refusal);
    if (this.refusalLog.length > MAX_RECEIPTS) this.refusalLog.shift();
  }

  refusals(): RefusedSend[] {
    return [...this.refusalLog];
  }

  addPairingRequest(request: PairingRequest): void {
    this.pairingLog.push(request);
    if (this.pairingLog.length > MAX_RECEIPTS) this.pairingLog.shift();
  }

  pairingRequests(): PairingRequest[] {
    return [...this.pairingLog];
  }

  addChatState(state: ChatState): void {
    this.chatStateLog.push(state);
    if (this.chatStateLog.length > MAX_RECEIPTS) this.chatStateLog.shift();
  }

  chatStates(): ChatState[] {
    return [...this.chatStateLog];
  }

  clientReceipts(): ClientReceipt[] {
    return [...this.receiptLog];
  }

  forget(device: PairedDevice): void {
    this.devices.delete(device.jid);
  }

  infoOf(device: PairedDevice): PairedDeviceInfo {
    return {
      jid: device.jid,
      number: device.number,
      deviceId: device.deviceId,
      lid: device.lid,
      connected: device.link?.ready ?? false,
    };
  }
}
