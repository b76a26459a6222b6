import type { BinaryNode } from '@whiskeysockets/baileys';
import type { PairedDevice, Registry } from './registry';

/** A receipt the client sent (delivery or read of messages it received), with the ids of its `<list>` too. */
export const recordReceipt = (registry: Registry, device: PairedDevice, node: BinaryNode): void => {
  const list = Array.isArray(node.content) ? node.content.find((child) => child.tag === 'list') : undefined;
  const items = Array.isArray(list?.content) ? list.content.map((item) => item.attrs.id ?? '') : [];
  registry.addReceipt({ from: device.jid, to: node.attrs.to ?? '', ids: [node.attrs.id ?? '', ...items], type: node.attrs.type, at: Date.now() });
};

/** Typing indicators: <chatstate to><composing/></chatstate> (or <paused/>), recorded as the chat saw them. */
export const recordChatState = (registry: Registry, device: PairedDevice, node: BinaryNode): void => {
  const state = Array.isArray(node.content) ? node.content[0]?.tag : undefined;
  if (state) registry.addChatState({ from: device.jid, to: node.attrs.to ?? '', state, at: Date.now() });
};
