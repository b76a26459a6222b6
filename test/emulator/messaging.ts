import { randomBytes } from 'node:crypto';
import {
  encodeWAMessage,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  normalizeMessageContent,
  proto,
  toNumber,
  unpadRandomMax16,
  type BinaryNode,
  type MediaType,
} from '@whiskeysockets/baileys';
import { decryptMedia, type MediaHost } from './mediaHost';
import { LID_SERVER, MAX_OFFLINE_PER_DEVICE, USER_SERVER, type PairedDevice, type Registry } from './registry';
import { richContentOf } from './content';
import { handleGroupMessage, isGroupJid } from './groups';
import { RESTRICTED_ERROR } from './restrictions';
import { bundleOf, takePreKey } from './signal';
import type { MediaKind, ReceivedMedia, ReceivedMessage } from './types';

const now = (): string => Math.floor(Date.now() / 1000).toString();

interface Copy {
  /** The phone number the copy was encrypted for. */
  recipient: string;
  message: proto.IMessage | undefined;
  error: string | undefined;
}

const decryptCopy = async (registry: Registry, sender: PairedDevice, recipientJid: string, enc: BinaryNode): Promise<Copy | undefined> => {
  const { number: recipient, device } = registry.addressOf(recipientJid);
  if (!recipient || device !== 0) return undefined;
  if (!(enc.content instanceof Uint8Array)) return { recipient, message: undefined, error: 'enc without ciphertext' };
  try {
    const plaintext = await registry.user(recipient).decrypt({ user: sender.number, device: sender.deviceId }, enc.attrs.type ?? '', enc.content);
    const message = proto.Message.decode(unpadRandomMax16(plaintext));
    return { recipient, message: message.deviceSentMessage?.message ?? message, error: undefined };
  } catch (error) {
    registry.options.log('cannot decrypt a client message', { recipientJid, error: String(error) });
    return { recipient, message: undefined, error: String(error) };
  }
};

const MEDIA: ReadonlyArray<[MediaKind, 'imageMessage' | 'videoMessage' | 'audioMessage' | 'documentMessage' | 'stickerMessage']> = [
  ['image', 'imageMessage'],
  ['video', 'videoMessage'],
  ['audio', 'audioMessage'],
  ['document', 'documentMessage'],
  ['sticker', 'stickerMessage'],
];

const mediaOf = async (content: proto.IMessage, media: MediaHost): Promise<ReceivedMedia | undefined> => {
  for (const [kind, field] of MEDIA) {
    const found = content[field];
    if (!found) continue;
    const caption = 'caption' in found ? (found.caption ?? undefined) : undefined;
    const fileName = 'fileName' in found ? (found.fileName ?? undefined) : undefined;
    const ptt = 'ptt' in found && found.ptt === true;
    const stored = media.find(found.directPath ?? found.url ?? '');
    const plaintext = stored && found.mediaKey ? await decryptMedia(stored.encrypted, found.mediaKey, kind satisfies MediaType) : undefined;
    return {
      kind,
      mimetype: found.mimetype ?? undefined,
      fileName,
      caption,
      url: found.url ?? undefined,
      directPath: found.directPath ?? undefined,
      fileLength: toNumber(found.fileLength ?? 0),
      ptt,
      upload: stored ? { directPath: stored.directPath, encryptedBytes: stored.encrypted.length, plaintext } : undefined,
    };
  }
  return undefined;
};

/** A receipt from `fromJid`'s phone to a device, if it is connected. */
export const sendServerReceipt = (device: PairedDevice, fromJid: string, id: string, type: 'delivery' | 'read' | 'played'): void => {
  if (!device.link?.ready) return;
  const attrs: Record<string, string> = { from: fromJid, id, t: now() };
  if (type !== 'delivery') attrs.type = type;
  device.link.send({ tag: 'receipt', attrs });
};

/**
 * A `<message>` a client sent: every copy decrypted (the recipient's phone and the sender's own phone), the server
 * ack, the message recorded, then the recipient's receipts on the configured delays.
 */
export const handleClientMessage = async (registry: Registry, media: MediaHost, sender: PairedDevice, node: BinaryNode): Promise<void> => {
  const id = node.attrs.id ?? '';
  const to = node.attrs.to ?? '';
  if (node.attrs.category !== 'peer' && registry.restrictions.of(sender.number)) {
    // A restricted account: the server refuses the send (a nack), decrypts and delivers nothing.
    registry.addRefusal({ id, fromNumber: sender.number, to, error: RESTRICTED_ERROR, at: Date.now() });
    sender.link?.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: now(), error: RESTRICTED_ERROR } });
    return;
  }
  const copies: Copy[] = [];
  for (const participant of getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to')) {
    const enc = getBinaryNodeChild(participant, 'enc');
    const copy = enc && (await decryptCopy(registry, sender, participant.attrs.jid ?? '', enc));
    if (copy) copies.push(copy);
  }
  if (isGroupJid(to)) return handleGroupMessage(registry, sender, node, copies);
  // Peer messages (category="peer") carry a single enc for the own phone.
  const direct = getBinaryNodeChild(node, 'enc');
  const peerCopy = direct && (await decryptCopy(registry, sender, `${sender.number}@${USER_SERVER}`, direct));
  sender.link?.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: now() } });
  if (node.attrs.category === 'peer' || peerCopy || !(to.endsWith(`@${USER_SERVER}`) || to.endsWith(`@${LID_SERVER}`))) return;

  const recipient = registry.addressOf(to).number;
  const copy = copies.find((c) => c.recipient === recipient) ?? copies.find((c) => c.recipient === sender.number);
  const content = copy?.message ? normalizeMessageContent(copy.message) : undefined;
  const mediaInfo = content ? await mediaOf(content, media) : undefined;
  // Decoded protobuf messages answer '' for unset strings, hence the first non-empty one.
  const text = [content?.conversation, content?.extendedTextMessage?.text, mediaInfo?.caption].find((value) => !!value) ?? undefined;
  const received: ReceivedMessage = {
    id,
    from: sender.jid,
    fromNumber: sender.number,
    to,
    toNumber: recipient,
    message: copy?.message,
    text: text ?? undefined,
    media: mediaInfo,
    rich: richContentOf(copy?.message),
    error: copy ? copy.error : 'no copy for the recipient',
    at: Date.now(),
  };
  registry.addReceived(received);
  if (received.error !== undefined) return;
  const { deliveryMs, readMs } = registry.receipts;
  const chat = `${recipient}@${USER_SERVER}`;
  if (deliveryMs !== null) registry.timers.after(deliveryMs, () => sendServerReceipt(sender, chat, id, 'delivery'));
  if (readMs !== null) registry.timers.after(readMs, () => sendServerReceipt(sender, chat, id, 'read'));
};

export interface InboundOptions {
  id: string;
  pushName: string | undefined;
  /** Marks it as delivered while the device was away (Baileys then upserts it as 'append'). */
  offline: boolean;
  /** From the sender's LID, with its number in `sender_pn`. */
  viaLid?: boolean;
}

/** `fromNumber`'s phone encrypts `message` for one companion; the `<message>` stanza to send it in. */
export const inboundNode = async (
  registry: Registry,
  device: PairedDevice,
  fromNumber: string,
  message: proto.IMessage,
  { id, pushName, offline, viaLid = false }: InboundOptions,
): Promise<BinaryNode> => {
  const { type, ciphertext } = await registry
    .user(fromNumber)
    .encrypt({ user: device.number, device: device.deviceId }, encodeWAMessage(message), () => bundleOf(device.keys, takePreKey(device.keys)));
  const phoneJid = `${fromNumber}@${USER_SERVER}`;
  const attrs: Record<string, string> = viaLid
    ? { from: `${registry.lidOf(fromNumber)}@${LID_SERVER}`, sender_pn: phoneJid, id, t: now(), type: 'text' }
    : { from: phoneJid, id, t: now(), type: 'text' };
  if (pushName !== undefined) attrs.notify = pushName;
  if (offline) attrs.offline = '1';
  return { tag: 'message', attrs, content: [{ tag: 'enc', attrs: { v: '2', type }, content: ciphertext }] };
};

/** Delivers now when the device is connected, else queues for its next login (bounded). */
export const deliver = async (
  registry: Registry,
  device: PairedDevice,
  fromNumber: string,
  message: proto.IMessage,
  { id, pushName, viaLid }: Omit<InboundOptions, 'offline'>,
): Promise<void> => {
  const online = device.link?.ready ?? false;
  if (!online && device.offline.length >= MAX_OFFLINE_PER_DEVICE) {
    throw new Error(`${device.jid} already has ${MAX_OFFLINE_PER_DEVICE} offline messages waiting`);
  }
  const node = await inboundNode(registry, device, fromNumber, message, { id, pushName, offline: !online, viaLid });
  if (online && device.link?.send(node)) return;
  node.attrs.offline = '1';
  device.offline.push(node);
};

/**
 * What a phone sends a newly linked companion: a history-sync notification (of a type Baileys does not download)
 * and an app-state key. Baileys keeps messages.upsert/update buffered after login until it holds an app-state key
 * and has synced with it (chats.js, receivedPendingNotifications and doAppStateSync); this is how it gets one.
 */
export const bootstrapNodes = async (registry: Registry, device: PairedDevice): Promise<BinaryNode[]> => {
  const history: proto.IMessage = {
    protocolMessage: {
      type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
      historySyncNotification: {
        syncType: proto.Message.HistorySyncType.NON_BLOCKING_DATA,
        chunkOrder: 0,
        progress: 100,
      },
    },
  };
  const keyShare: proto.IMessage = {
    protocolMessage: {
      type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
      appStateSyncKeyShare: {
        keys: [
          {
            keyId: { keyId: randomBytes(6) },
            keyData: {
              keyData: randomBytes(32),
              fingerprint: { rawId: 1, currentIndex: 0, deviceIndexes: [0] },
              timestamp: Date.now(),
            },
          },
        ],
      },
    },
  };
  const nodes: BinaryNode[] = [];
  for (const message of [history, keyShare]) {
    nodes.push(await inboundNode(registry, device, device.number, message, { id: registry.nextMessageId(), pushName: undefined, offline: true }));
  }
  return nodes;
};
