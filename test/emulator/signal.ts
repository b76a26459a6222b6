import {
  Curve,
  KEY_BUNDLE_TYPE,
  encodeBigEndian,
  generateRegistrationId,
  generateSignalPubKey,
  signedKeyPair,
  type BinaryNode,
  type KeyPair,
  type SignedKeyPair,
} from '@whiskeysockets/baileys';
import { ProtocolAddress, SessionBuilder, SessionCipher, SessionRecord, type SignalStorage } from 'libsignal';

/** What libsignal needs to open a session to a device: the bundle the device uploaded (33-byte keys). */
export type PreKeyBundle = Parameters<SessionBuilder['initOutgoing']>[0];

/** The public keys a companion uploaded: at registration (identity, signed pre-key) and after login (pre-keys). */
export interface UploadedKeys {
  registrationId: number;
  identityKey: Buffer;
  signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer };
  preKeys: Map<number, Buffer>;
}

export interface SignalPeer {
  user: string;
  device: number;
}

const MAX_PRE_KEYS = 256;
const MAX_SESSIONS = 1_000;
const MAX_PRE_KEY_ID = 0xffffff;

/** The bundle libsignal opens a session with; without a one-time pre-key it falls back to the signed one. */
export const bundleOf = (keys: UploadedKeys, preKey: { keyId: number; publicKey: Buffer } | undefined): PreKeyBundle => {
  const bundle = {
    registrationId: keys.registrationId,
    identityKey: generateSignalPubKey(keys.identityKey),
    signedPreKey: {
      keyId: keys.signedPreKey.keyId,
      publicKey: generateSignalPubKey(keys.signedPreKey.publicKey),
      signature: keys.signedPreKey.signature,
    },
    preKey: preKey ? { keyId: preKey.keyId, publicKey: generateSignalPubKey(preKey.publicKey) } : undefined,
  };
  // libsignal's typings mark preKey as required, but session_builder.js treats it as optional (X3DH without it).
  return bundle as PreKeyBundle;
};

/** Takes (and consumes) the oldest one-time pre-key a companion uploaded. */
export const takePreKey = (keys: UploadedKeys): { keyId: number; publicKey: Buffer } | undefined => {
  for (const [keyId, publicKey] of keys.preKeys) {
    keys.preKeys.delete(keyId);
    return { keyId, publicKey };
  }
  return undefined;
};

/**
 * Device 0 (the phone) of a WhatsApp user the emulator plays: a real Signal identity with a signed pre-key and
 * one-time pre-keys, so Baileys' libsignal can open sessions to it, and libsignal sessions of its own to decrypt
 * what companions send and to encrypt what it sends them.
 */
export class FakeUser {
  readonly identity: KeyPair = Curve.generateKeyPair();
  readonly registrationId = generateRegistrationId();
  readonly signedPreKey: SignedKeyPair = signedKeyPair(this.identity, 1);
  private readonly preKeys = new Map<number, KeyPair>();
  private nextPreKeyId = 1;
  private readonly sessions = new Map<string, Uint8Array>();
  private readonly storage: SignalStorage;

  constructor(readonly number: string) {
    this.storage = {
      loadSession: async (id) => {
        const data = this.sessions.get(id);
        return data ? SessionRecord.deserialize(data) : undefined;
      },
      storeSession: async (id, session) => {
        this.sessions.delete(id);
        this.sessions.set(id, session.serialize());
        this.trim(this.sessions, MAX_SESSIONS);
      },
      isTrustedIdentity: () => true,
      loadPreKey: async (id) => {
        const pair = this.preKeys.get(Number(id));
        return pair ? { privKey: Buffer.from(pair.private), pubKey: Buffer.from(pair.public) } : undefined;
      },
      removePreKey: (id) => {
        this.preKeys.delete(Number(id));
      },
      loadSignedPreKey: () => ({
        privKey: Buffer.from(this.signedPreKey.keyPair.private),
        pubKey: Buffer.from(this.signedPreKey.keyPair.public),
      }),
      getOurRegistrationId: () => this.registrationId,
      getOurIdentity: () => ({
        privKey: Buffer.from(this.identity.private),
        pubKey: Buffer.from(generateSignalPubKey(this.identity.public)),
      }),
    };
  }

  /** The `<user>` node of an `encrypt` key fetch, with a fresh one-time pre-key. */
  bundleNode(jid: string): BinaryNode {
    const preKeyId = this.nextPreKeyId;
    this.nextPreKeyId = (this.nextPreKeyId % MAX_PRE_KEY_ID) + 1;
    const preKey = Curve.generateKeyPair();
    this.preKeys.set(preKeyId, preKey);
    this.trim(this.preKeys, MAX_PRE_KEYS);
    return {
      tag: 'user',
      attrs: { jid },
      content: [
        { tag: 'registration', attrs: {}, content: encodeBigEndian(this.registrationId) },
        { tag: 'type', attrs: {}, content: KEY_BUNDLE_TYPE },
        { tag: 'identity', attrs: {}, content: this.identity.public },
        {
          tag: 'skey',
          attrs: {},
          content: [
            { tag: 'id', attrs: {}, content: encodeBigEndian(this.signedPreKey.keyId, 3) },
            { tag: 'value', attrs: {}, content: this.signedPreKey.keyPair.public },
            { tag: 'signature', attrs: {}, content: this.signedPreKey.signature },
          ],
        },
        {
          tag: 'key',
          attrs: {},
          content: [
            { tag: 'id', attrs: {}, content: encodeBigEndian(preKeyId, 3) },
            { tag: 'value', attrs: {}, content: preKey.public },
          ],
        },
      ],
    };
  }

  /** Decrypts what the companion `from` sent this user ('pkmsg' opens the session). */
  async decrypt(from: SignalPeer, type: string, ciphertext: Uint8Array): Promise<Buffer> {
    const cipher = new SessionCipher(this.storage, new ProtocolAddress(from.user, from.device));
    const data = Buffer.from(ciphertext);
    if (type === 'pkmsg') return cipher.decryptPreKeyWhisperMessage(data);
    if (type === 'msg') return cipher.decryptWhisperMessage(data);
    throw new Error(`unsupported enc type '${type}'`);
  }

  /**
   * Encrypts for a companion, over the session already open with it, or a new one from its uploaded keys
   * (`bundle` is only called then, so a one-time pre-key is consumed only when needed).
   */
  async encrypt(to: SignalPeer, plaintext: Uint8Array, bundle: () => PreKeyBundle): Promise<{ type: 'pkmsg' | 'msg'; ciphertext: Buffer }> {
    const address = new ProtocolAddress(to.user, to.device);
    const existing = await this.storage.loadSession(address.toString());
    if (!existing?.haveOpenSession()) await new SessionBuilder(this.storage, address).initOutgoing(bundle());
    const { type, body } = await new SessionCipher(this.storage, address).encrypt(Buffer.from(plaintext));
    return { type: type === 3 ? 'pkmsg' : 'msg', ciphertext: Buffer.from(body, 'binary') };
  }

  private trim<K, V>(map: Map<K, V>, max: number): void {
    for (const key of map.keys()) {
      if (map.size <= max) return;
      map.delete(key);
    }
  }
}
