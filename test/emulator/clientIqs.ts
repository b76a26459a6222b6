import { getBinaryNodeChild, type BinaryNode } from '@whiskeysockets/baileys';
import { answerIq, appStateAnswer, iqError, iqResult } from './iq';
import { finishLogin } from './loginSequence';
import type { MediaHost } from './mediaHost';
import type { PairedDevice, Registry } from './registry';

export interface ClientIqContext {
  registry: Registry;
  media: MediaHost;
  connectionId: number;
  /** The logged-in device; undefined before login (only pings and pairing-code requests are answered then). */
  device: PairedDevice | undefined;
  send: (node: BinaryNode) => void;
  /** Ends the connection (a login sequence that failed). */
  drop: () => void;
}

/** Answers an iq the client asked (`get`/`set`): pings, pairing-code requests, the login's `passive`, app state, the rest (`answerIq`). */
export const answerClientIq = ({ registry, media, connectionId, device, send, drop }: ClientIqContext, node: BinaryNode): void => {
  const { xmlns } = node.attrs;
  if (xmlns === 'w:p') {
    send(iqResult(node));
    return;
  }
  const hello = xmlns === 'md' ? getBinaryNodeChild(node, 'link_code_companion_reg') : undefined;
  if (hello?.attrs.stage === 'companion_hello') {
    // A pairing-code request: recorded for tests (the phone side of pairing by code is not played).
    registry.addPairingRequest({ connectionId, number: registry.addressOf(hello.attrs.jid ?? '').number, at: Date.now() });
    send(iqResult(node));
    return;
  }
  if (!device) {
    send(iqError(node, 401, 'not-authorized'));
    return;
  }
  if (xmlns === 'passive') {
    void finishLogin(registry, device, node, send, drop);
    return;
  }
  if (xmlns === 'w:sync:app:state') {
    send(appStateAnswer(node));
    device.appStateReady = true;
    return;
  }
  send(answerIq(registry, media, device, node));
};
