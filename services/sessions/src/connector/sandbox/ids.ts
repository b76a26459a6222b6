import { randomBytes } from 'node:crypto';

/**
 * A QR payload shaped like WhatsApp Web's: `ref,noise public key,identity key,adv secret`, the keys base64 of 32
 * random bytes. Random per call, so two codes never repeat in practice (a 48-byte ref alone makes a collision
 * impossible to observe).
 */
export const newQr = (): string =>
  [`2@${randomBytes(48).toString('base64')}`, randomBytes(32).toString('base64'), randomBytes(32).toString('base64'), randomBytes(32).toString('base64')].join(
    ',',
  );

/** A platform message id shaped like the ones WhatsApp Web clients create (`3EB0` + upper-case hex). */
export const newPlatformMessageId = (): string => `3EB0${randomBytes(10).toString('hex').toUpperCase()}`;

/** Crockford base-32 without I, L, O and U, as WhatsApp's pairing codes. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** An 8-character pairing code as WhatsApp shows them (5 random bytes in Crockford base 32). */
export const newPairingCode = (): string => {
  const bits = randomBytes(5).reduce((value, byte) => (value << 8n) | BigInt(byte), 0n);
  return Array.from({ length: 8 }, (_, i) => CROCKFORD[Number((bits >> BigInt(35 - 5 * i)) & 31n)]).join('');
};

/** International digits without '+', as the port carries numbers. */
export const isDigits = (value: string): boolean => /^[0-9]{1,20}$/.test(value);
