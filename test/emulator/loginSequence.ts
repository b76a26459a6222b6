import type { BinaryNode } from '@whiskeysockets/baileys';
import { iqResult } from './iq';
import { bootstrapNodes } from './messaging';
import type { PairedDevice, Registry } from './registry';

/**
 * The last step before Baileys reports `open`, on the client's `passive` iq: offline messages, the first-login
 * app-state bootstrap, then `<ib><offline/>` (which releases Baileys' event buffer), then the passive answer, hence
 * `open`. (Baileys 6 held its events until it had synced app state with the shared key, so the answer waited for
 * that sync; Baileys 7 flushes on `<ib><offline/>` when history sync is off.) A failure ends the connection (`drop`).
 */
export const finishLogin = async (
  registry: Registry,
  device: PairedDevice,
  request: BinaryNode,
  send: (node: BinaryNode) => void,
  drop: () => void,
): Promise<void> => {
  try {
    const nodes = device.offline.splice(0);
    const bootstrap = !device.appStateReady;
    if (bootstrap) nodes.push(...(await bootstrapNodes(registry, device)));
    for (const node of nodes) send(node);
    send({ tag: 'ib', attrs: { from: 's.whatsapp.net' }, content: [{ tag: 'offline', attrs: { count: String(nodes.length) } }] });
    if (bootstrap) await registry.timers.sleep(registry.options.settleMs);
    send(iqResult(request));
  } catch (error) {
    registry.options.log('login sequence failed', { jid: device.jid, error: String(error) });
    drop();
  }
};
