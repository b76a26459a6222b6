import { createHash, randomInt } from 'node:crypto';
import { Curve, getBinaryNodeChild, hmacSign, proto, type BinaryNode, type KeyPair } from '@whiskeysockets/baileys';

/**
 * The QR a companion shows: `https://wa.me/settings/linked_devices#ref,base64(noise key),base64(identity key),
 * base64(adv secret),platform id` (Baileys 7; 6.x showed the four parts alone, which are still accepted).
 */
export interface QrParts {
  ref: string;
  noiseKey: Buffer;
  identityKey: Buffer;
  advSecret: Buffer;
}

export const parseQr = (qr: string): QrParts => {
  const parts = qr.replace(/^https:\/\/wa\.me\/settings\/linked_devices#/, '').split(',');
  const [ref, noise, identity, adv] = parts;
  if ((parts.length !== 4 && parts.length !== 5) || !ref || !noise || !identity || !adv) {
    throw new Error(`not a WhatsApp Web QR string: '${qr}'`);
  }
  const noiseKey = Buffer.from(noise, 'base64');
  const identityKey = Buffer.from(identity, 'base64');
  const advSecret = Buffer.from(adv, 'base64');
  if (noiseKey.length !== 32 || identityKey.length !== 32 || advSecret.length === 0) {
    throw new Error('QR string keys have the wrong length');
  }
  return { ref, noiseKey, identityKey, advSecret };
};

/** QR refs the way the server hands them out (`2@…`); derived from a seed so runs are reproducible. */
export const qrRefs = (seed: string, count: number): string[] =>
  Array.from({ length: count }, (_, index) => `2@${createHash('sha256').update(`${seed}/${index}`).digest('base64').slice(0, 43)}`);

export interface PairSuccessInput {
  iqId: string;
  qr: QrParts;
  deviceJid: string;
  keyIndex: number;
  /** The phone's account signing key (ADV), constant for a phone number. */
  account: KeyPair;
  platform: string;
}

/**
 * The `pair-success` the phone's scan makes the server send: an ADVSignedDeviceIdentity over the companion's
 * identity key (from the QR) signed by the account key, wrapped in an HMAC keyed by the QR's adv secret. These are
 * the two checks Baileys makes (configureSuccessfulPairing).
 */
export const pairSuccessNode = ({ iqId, qr, deviceJid, keyIndex, account, platform }: PairSuccessInput): BinaryNode => {
  const details = proto.ADVDeviceIdentity.encode({
    rawId: randomInt(1, 0x7fffffff),
    timestamp: Math.floor(Date.now() / 1000),
    keyIndex,
  }).finish();
  const accountSignature = Curve.sign(account.private, Buffer.concat([Buffer.from([6, 0]), details, qr.identityKey]));
  const signed = proto.ADVSignedDeviceIdentity.encode({
    details,
    accountSignatureKey: account.public,
    accountSignature,
  }).finish();
  const identity = proto.ADVSignedDeviceIdentityHMAC.encode({ details: signed, hmac: hmacSign(signed, qr.advSecret) }).finish();
  return {
    tag: 'iq',
    attrs: { from: 's.whatsapp.net', type: 'set', id: iqId, xmlns: 'md' },
    content: [
      {
        tag: 'pair-success',
        attrs: {},
        content: [
          { tag: 'device-identity', attrs: {}, content: identity },
          { tag: 'platform', attrs: { name: platform } },
          { tag: 'device', attrs: { jid: deviceJid } },
        ],
      },
    ],
  };
};

/**
 * Checks the companion's `pair-device-sign` answer: its device signature over
 * `6 1 ‖ details ‖ identity key ‖ account key`, made with the identity key from the QR.
 */
export const verifyDeviceSign = (reply: BinaryNode, identityKey: Buffer, accountKey: Uint8Array): boolean => {
  const identityNode = getBinaryNodeChild(getBinaryNodeChild(reply, 'pair-device-sign'), 'device-identity');
  if (!(identityNode?.content instanceof Uint8Array)) return false;
  const signed = proto.ADVSignedDeviceIdentity.decode(identityNode.content);
  if (!signed.details || !signed.deviceSignature) return false;
  const message = Buffer.concat([Buffer.from([6, 1]), signed.details, identityKey, accountKey]);
  return Curve.verify(identityKey, message, signed.deviceSignature);
};
