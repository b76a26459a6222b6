import { createHmac } from 'node:crypto';

/** The raw key of a `whsec_<base64>` secret. */
const keyOf = (secret: string): Buffer => Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');

/** Standard Webhooks `v1` signature: base64 HMAC-SHA256 of `id.timestamp.body` (node:crypto: 4x the JS library). */
export const signWebhook = (secret: string, id: string, timestampSeconds: number, body: string): string =>
  `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;

/** The three Standard Webhooks headers of one attempt (the timestamp is the attempt's). */
export const webhookHeaders = (secret: string, id: string, body: string, now: Date): Record<string, string> => {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
};
