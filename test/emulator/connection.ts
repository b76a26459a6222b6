import { decodeBinaryNode, encodeBinaryNode, jidEncode, toNumber, type BinaryNode, type KeyPair, type proto } from '@whiskeysockets/baileys';
import { FrameReader, encodeFrame } from './frames';
import type { MediaHost } from './mediaHost';
import { handleClientMessage } from './messaging';
import { recordChatState, recordReceipt } from './clientStanzas';
import { KICKS, olderThan } from './kicks';
import { answerClientIq } from './clientIqs';
import { NoiseResponder, type TransportCipher } from './noise';
import { pairSuccessNode, qrRefs, verifyDeviceSign, type QrParts } from './pairing';
import type { DeviceLink, PairedDevice, Registry } from './registry';
import type { UploadedKeys } from './signal';
import type { ConnectionInfo, ConnectionStage, KickReason } from './types';
import type { WsPeer } from './wsPeer';

export interface ConnectionDeps {
  registry: Registry;
  media: MediaHost;
  staticKey: KeyPair;
  certificate: Uint8Array;
  /** Seeds the QR refs, so they differ between emulators but repeat between runs. */
  seed: string;
}

const MAX_FRAME_BYTES = 4 * 1024 * 1024;
const HANDSHAKE_TIMEOUT_MS = 10_000;
const PAIR_REPLY_TIMEOUT_MS = 10_000;
/** After a stream:error or failure the client closes; the server closes too if it has not, a moment later. */
const CLOSE_AFTER_KICK_MS = 100;
const MAX_QUEUED_FRAMES = 500;

interface PendingIq {
  resolve: (node: BinaryNode) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * One client WebSocket: the Noise handshake, then either registration (pair-device refs, waiting for scan()) or
 * login (success, the iqs Baileys needs to reach `open`, offline messages and `<ib><offline/>`).
 */
export class ClientConnection implements DeviceLink {
  private stage: ConnectionStage = 'handshake';
  private readonly noise: NoiseResponder;
  private transport: TransportCipher | undefined;
  private helloDone = false;
  private readonly reader = new FrameReader(MAX_FRAME_BYTES);
  private inbox: Promise<void> = Promise.resolve();
  private queuedFrames = 0;
  private device: PairedDevice | undefined;
  private clientStaticKey: Buffer | undefined;
  private registration: Omit<UploadedKeys, 'preKeys'> | undefined;
  private refs: string[] = [];
  private successSent = false;
  private readonly serverIqs = new Map<string, PendingIq>();
  private readonly closed: Promise<void>;
  private markClosed: () => void = () => undefined;
  private readonly handshakeTimer: NodeJS.Timeout;

  constructor(
    readonly id: number,
    private readonly peer: WsPeer,
    private readonly deps: ConnectionDeps,
  ) {
    this.noise = new NoiseResponder(deps.staticKey, deps.certificate);
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.handshakeTimer = setTimeout(() => this.peer.destroy(), HANDSHAKE_TIMEOUT_MS);
    this.handshakeTimer.unref();
  }

  get info(): ConnectionInfo {
    return { id: this.id, stage: this.stage, jid: this.device?.jid, number: this.device?.number, qrRefs: [...this.refs] };
  }

  get ready(): boolean {
    return this.stage === 'logged-in' && this.successSent && this.peer.open;
  }

  /** The QR refs offered to this connection, if it is waiting for a scan. */
  offers(ref: string): boolean {
    return this.stage === 'pairing' && this.refs.includes(ref);
  }

  onMessage(data: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.reader.push(data);
    } catch (error) {
      this.deps.registry.options.log('bad framing, dropping the connection', { id: this.id, error: String(error) });
      this.peer.destroy();
      return;
    }
    for (const frame of frames) {
      if (++this.queuedFrames > MAX_QUEUED_FRAMES) {
        this.peer.destroy();
        return;
      }
      this.inbox = this.inbox.then(async () => {
        this.queuedFrames -= 1;
        try {
          await this.onFrame(frame);
        } catch (error) {
          this.deps.registry.options.log('dropping the connection after an error', { id: this.id, error: String(error) });
          this.peer.destroy();
        }
      });
    }
  }

  onClose(): void {
    if (this.stage === 'closed') return;
    this.stage = 'closed';
    clearTimeout(this.handshakeTimer);
    for (const pending of this.serverIqs.values()) {
      clearTimeout(pending.timer);
      pending.reject(new Error('the connection closed'));
    }
    this.serverIqs.clear();
    if (this.device?.link === this) this.device.link = undefined;
    this.markClosed();
  }

  send(node: BinaryNode): boolean {
    if (!this.transport || !this.peer.open) return false;
    return this.peer.send(encodeFrame(this.transport.encrypt(encodeBinaryNode(node))));
  }

  async kick(reason: KickReason): Promise<void> {
    if (this.stage === 'closed') return;
    if (reason === 'tcp-close' || !this.transport) {
      this.peer.destroy();
    } else {
      this.send(KICKS[reason]);
      if ((reason === 'logged-out' || reason === 'device-removed') && this.device) this.deps.registry.forget(this.device);
      this.deps.registry.timers.after(CLOSE_AFTER_KICK_MS, () => this.peer.close());
    }
    await this.closed;
  }

  /** Closes at once (emulator stop). */
  async terminate(): Promise<void> {
    this.peer.destroy();
    await this.closed;
  }

  /** The phone scanned this connection's QR: pair-success, the companion's signed answer, then 515. */
  async pair(qr: QrParts, number: string): Promise<PairedDevice> {
    const { registry } = this.deps;
    const registration = this.registration;
    const noiseKey = this.clientStaticKey;
    if (this.stage !== 'pairing' || !registration || !noiseKey) throw new Error(`connection ${this.id} is not waiting for a scan`);
    if (!qr.noiseKey.equals(noiseKey) || !qr.identityKey.equals(registration.identityKey)) {
      throw new Error(`the QR's keys are not those of connection ${this.id}`);
    }
    const deviceId = registry.allocateDeviceId(number);
    const jid = jidEncode(number, 's.whatsapp.net', deviceId);
    const account = registry.account(number);
    const iqId = `pair-success-${this.id}`;
    const reply = this.awaitIqReply(iqId, PAIR_REPLY_TIMEOUT_MS);
    this.send(pairSuccessNode({ iqId, qr, deviceJid: jid, keyIndex: deviceId, account, platform: 'android' }));
    const answer = await reply;
    if (!verifyDeviceSign(answer, registration.identityKey, account.public)) {
      throw new Error('the companion answered pair-success with a bad device signature');
    }
    const device: PairedDevice = {
      jid,
      number,
      deviceId,
      lid: `${this.deps.registry.lidOf(number)}:${deviceId}@lid`,
      noiseKey,
      keys: { ...registration, preKeys: new Map() },
      appStateReady: false,
      link: undefined,
      offline: [],
    };
    registry.devices.set(jid, device);
    // WhatsApp makes a freshly paired companion reconnect and log in with its new identity.
    void this.kick('restart-required');
    return device;
  }

  private awaitIqReply(id: string, timeoutMs: number): Promise<BinaryNode> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.serverIqs.delete(id);
        reject(new Error(`no answer to iq ${id} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.serverIqs.set(id, { resolve, reject, timer });
    });
  }

  private async onFrame(frame: Buffer): Promise<void> {
    if (this.stage === 'closed') return;
    if (!this.helloDone) {
      this.helloDone = true;
      this.peer.send(encodeFrame(this.noise.serverHello(frame)));
      return;
    }
    if (!this.transport) {
      const { clientStaticKey, payload } = this.noise.clientFinish(frame);
      this.transport = this.noise.split();
      this.clientStaticKey = clientStaticKey;
      clearTimeout(this.handshakeTimer);
      await this.deps.registry.timers.sleep(this.deps.registry.options.settleMs);
      if (!this.peer.open) return;
      const min = this.deps.registry.options.minClientVersion;
      if (min && olderThan(payload.userAgent?.appVersion, min)) {
        void this.kick('client-outdated');
        return;
      }
      if (payload.devicePairingData) this.startPairing(payload.devicePairingData);
      else this.login(payload, clientStaticKey);
      return;
    }
    const node = await decodeBinaryNode(this.transport.decrypt(frame));
    await this.onNode(node);
  }

  private startPairing(data: proto.ClientPayload.IDevicePairingRegistrationData): void {
    const { eRegid, eIdent, eSkeyId, eSkeyVal, eSkeySig } = data;
    if (eRegid?.length !== 4 || eIdent?.length !== 32 || !eSkeyId?.length || eSkeyVal?.length !== 32 || !eSkeySig?.length) {
      throw new Error('registration payload without complete device keys');
    }
    this.registration = {
      registrationId: Buffer.from(eRegid).readUInt32BE(0),
      identityKey: Buffer.from(eIdent),
      signedPreKey: { keyId: Buffer.from(eSkeyId).readUIntBE(0, eSkeyId.length), publicKey: Buffer.from(eSkeyVal), signature: Buffer.from(eSkeySig) },
    };
    this.refs = qrRefs(`${this.deps.seed}/${this.id}`, this.deps.registry.options.qrRefCount);
    this.stage = 'pairing';
    this.send({
      tag: 'iq',
      attrs: { from: 's.whatsapp.net', type: 'set', id: `pair-device-${this.id}`, xmlns: 'md' },
      content: [{ tag: 'pair-device', attrs: {}, content: this.refs.map((ref) => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }],
    });
    this.deps.registry.connectionWaiters.notify(this.info);
  }

  private login(payload: proto.ClientPayload, clientStaticKey: Buffer): void {
    const { registry } = this.deps;
    const jid = jidEncode(String(toNumber(payload.username)), 's.whatsapp.net', payload.device ?? 0);
    const device = registry.devices.get(jid);
    if (!device || !device.noiseKey.equals(clientStaticKey)) {
      void this.kick('logged-out');
      return;
    }
    const previous = device.link;
    if (previous && registry.options.replaceOnLogin) void previous.kick('replaced');
    device.link = this;
    this.device = device;
    this.stage = 'logged-in';
    const t = Math.floor(Date.now() / 1000).toString();
    this.send({ tag: 'success', attrs: { t, props: '1', abprops: '1', location: 'frc', lid: device.lid, creation: t } });
    this.successSent = true;
    registry.connectionWaiters.notify(this.info);
  }

  private async onNode(node: BinaryNode): Promise<void> {
    const { registry, media } = this.deps;
    switch (node.tag) {
      case 'iq':
        return this.onIq(node);
      case 'message':
        if (this.device) await handleClientMessage(registry, media, this.device, node);
        return;
      case 'receipt':
        if (this.device) recordReceipt(registry, this.device, node);
        return;
      case 'chatstate':
        if (this.device) recordChatState(registry, this.device, node);
        return;
      case 'ack':
      case 'presence':
        return;
      default:
        registry.options.log('unhandled stanza', { tag: node.tag, attrs: node.attrs });
    }
  }

  private onIq(node: BinaryNode): void {
    const { type, id = '' } = node.attrs;
    if (type === 'result' || type === 'error') {
      const pending = this.serverIqs.get(id);
      if (!pending) return;
      this.serverIqs.delete(id);
      clearTimeout(pending.timer);
      if (type === 'result') pending.resolve(node);
      else pending.reject(new Error(`the client answered iq ${id} with an error`));
      return;
    }
    answerClientIq(
      {
        ...this.deps,
        connectionId: this.id,
        device: this.stage === 'logged-in' ? this.device : undefined,
        send: (stanza) => this.send(stanza),
        drop: () => this.peer.destroy(),
      },
      node,
    );
  }
}
