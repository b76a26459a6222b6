import { encodeWAMessage, getBinaryNodeChildren, proto, unpadRandomMax16, type BinaryNode } from '@whiskeysockets/baileys';
// Baileys' own sender-key implementation (WhatsApp's group cipher), the same code its client encrypts with.
import { GroupCipher, GroupSessionBuilder, SenderKeyDistributionMessage, SenderKeyName } from '@whiskeysockets/baileys/lib/Signal/Group/index.js';
import { richContentOf } from './content';
import { GROUP_SERVER, type EmulatedGroup } from './groupStore';
import { LID_SERVER, type PairedDevice, type Registry } from './registry';
import { bundleOf, takePreKey } from './signal';
import type { ReceivedMessage } from './types';

/** A copy of a group message's sender key distribution, decrypted by one participant's phone. */
export interface DistributionCopy {
  recipient: string;
  message: proto.IMessage | undefined;
}

const now = (): string => Math.floor(Date.now() / 1000).toString();
const userJid = (number: string): string => `${number}@s.whatsapp.net`;

/** How a group names a member: its phone-number jid, or its LID jid in a LID-addressed group. */
const memberJid = (registry: Registry, group: EmulatedGroup, number: string): string =>
  group.addressing === 'lid' ? `${registry.lidOf(number)}@${LID_SERVER}` : userJid(number);

/** A `<group>` node as the `w:g2` answers carry it: members by number, or by LID with their number beside it. */
const groupNode = (registry: Registry, group: EmulatedGroup): BinaryNode => ({
  tag: 'group',
  attrs: {
    id: group.id.split('@')[0] ?? '',
    subject: group.subject,
    s_t: String(group.creation),
    s_o: memberJid(registry, group, group.creator),
    creation: String(group.creation),
    creator: memberJid(registry, group, group.creator),
    addressing_mode: group.addressing,
    size: String(group.participants.length),
  },
  content: group.participants.map((number) => ({
    tag: 'participant',
    attrs: {
      jid: memberJid(registry, group, number),
      ...(group.addressing === 'lid' ? { phone_number: userJid(number) } : {}),
      ...(number === group.creator ? { type: 'superadmin' } : {}),
    },
  })),
});

/**
 * `<iq xmlns="w:g2">`: the groups the device's account takes part in (`participating`, Baileys'
 * groupFetchAllParticipating) and one group's metadata (`query`, before a group send). A group the account is not in
 * answers item-not-found (404), as WhatsApp does.
 */
export const groupIqAnswer = (registry: Registry, device: PairedDevice, request: BinaryNode): BinaryNode[] | { error: number; text: string } | null => {
  const first = Array.isArray(request.content) ? request.content[0]?.tag : undefined;
  if (request.attrs.type !== 'get') return null;
  if (first === 'participating') {
    return [{ tag: 'groups', attrs: {}, content: registry.groups.of(device.number).map((group) => groupNode(registry, group)) }];
  }
  if (first === 'query') {
    const group = registry.groups.get(request.attrs.to ?? '');
    if (!group?.participants.includes(device.number)) return { error: 404, text: 'item-not-found' };
    return [groupNode(registry, group)];
  }
  return null;
};

const textOf = (message: proto.IMessage | undefined): string | undefined =>
  [message?.conversation, message?.extendedTextMessage?.text].find((value) => !!value) ?? undefined;

/**
 * A companion's group message: the sender key it distributed (a pkmsg per participant device) processed by each
 * participant's phone, then the `skmsg` decrypted by every participant's phone (the sender's own phone included),
 * each copy recorded as received by that phone. Receipts come from each other participant (with `participant`).
 */
export const handleGroupMessage = async (registry: Registry, sender: PairedDevice, node: BinaryNode, copies: readonly DistributionCopy[]): Promise<void> => {
  const id = node.attrs.id ?? '';
  const to = node.attrs.to ?? '';
  const group = registry.groups.get(to);
  const skmsg = getBinaryNodeChildren(node, 'enc').find((enc) => enc.attrs.type === 'skmsg');
  sender.link?.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: now() } });
  if (!group || !(skmsg?.content instanceof Uint8Array)) {
    registry.options.log('a group message the emulator cannot read', { to, skmsg: !!skmsg });
    return;
  }
  const name = new SenderKeyName(group.id, { id: sender.number, deviceId: sender.deviceId, toString: () => `${sender.number}.${sender.deviceId}` });
  for (const copy of copies) {
    const distribution = copy.message?.senderKeyDistributionMessage?.axolotlSenderKeyDistributionMessage;
    if (!distribution) continue;
    await new GroupSessionBuilder(registry.groups.storeOf(copy.recipient)).process(
      name,
      new SenderKeyDistributionMessage(null, null, null, null, distribution),
    );
  }
  for (const participant of group.participants) {
    let message: proto.IMessage | undefined;
    let error: string | undefined;
    try {
      const plaintext = await new GroupCipher(registry.groups.storeOf(participant), name).decrypt(skmsg.content);
      message = proto.Message.decode(unpadRandomMax16(plaintext));
    } catch (failure) {
      error = String(failure);
    }
    const received: ReceivedMessage = {
      id,
      from: sender.jid,
      fromNumber: sender.number,
      to: group.id,
      toNumber: participant,
      message,
      text: textOf(message),
      media: undefined,
      rich: richContentOf(message),
      error,
      at: Date.now(),
    };
    registry.addReceived(received);
    if (error !== undefined || participant === sender.number) continue;
    const { deliveryMs, readMs } = registry.receipts;
    const receipt = (type: 'delivery' | 'read') => () =>
      sender.link?.ready &&
      sender.link.send({
        tag: 'receipt',
        attrs: { from: group.id, participant: memberJid(registry, group, participant), id, t: now(), ...(type === 'read' ? { type } : {}) },
      });
    if (deliveryMs !== null) registry.timers.after(deliveryMs, receipt('delivery'));
    if (readMs !== null) registry.timers.after(readMs, receipt('read'));
  }
};

/**
 * `fromNumber`'s phone writes `message` in `group` to one companion, as WhatsApp delivers group messages: its
 * sender key for the group in a pkmsg (a Signal session to the companion), the content in an `skmsg` under it.
 */
export const groupInboundNode = async (
  registry: Registry,
  device: PairedDevice,
  group: EmulatedGroup,
  fromNumber: string,
  message: proto.IMessage,
  { id, pushName, withoutPn = false }: { id: string; pushName: string | undefined; withoutPn?: boolean },
): Promise<BinaryNode> => {
  const store = registry.groups.storeOf(fromNumber);
  const name = new SenderKeyName(group.id, { id: fromNumber, deviceId: 0, toString: () => `${fromNumber}.0` });
  const distribution = await new GroupSessionBuilder(store).create(name);
  const skmsg = await new GroupCipher(store, name).encrypt(encodeWAMessage(message));
  const keyMessage: proto.IMessage = { senderKeyDistributionMessage: { groupId: group.id, axolotlSenderKeyDistributionMessage: distribution.serialize() } };
  const { type, ciphertext } = await registry
    .user(fromNumber)
    .encrypt({ user: device.number, device: device.deviceId }, encodeWAMessage(keyMessage), () => bundleOf(device.keys, takePreKey(device.keys)));
  const attrs: Record<string, string> = { from: group.id, participant: memberJid(registry, group, fromNumber), id, t: now(), type: 'text' };
  // A LID-addressed group names the author's number beside its LID, as 1:1 chats do with sender_pn.
  if (group.addressing === 'lid' && !withoutPn) attrs.participant_pn = userJid(fromNumber);
  if (pushName !== undefined) attrs.notify = pushName;
  return {
    tag: 'message',
    attrs,
    content: [
      { tag: 'enc', attrs: { v: '2', type }, content: ciphertext },
      { tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: skmsg },
    ],
  };
};

export const isGroupJid = (jid: string): boolean => jid.endsWith(`@${GROUP_SERVER}`);
