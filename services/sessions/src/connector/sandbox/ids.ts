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

/** International digits without '+', as the port carries numbers. */
export const isDigits = (value: string): boolean => /^[0-9]{1,20}$/.test(value);
