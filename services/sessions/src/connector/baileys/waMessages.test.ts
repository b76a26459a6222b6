import { isRecipientUnknown } from './waMessages';

/** What Baileys throws: a Boom (an Error with `isBoom`, `data` and an HTTP-like status). */
const boom = (message: string, extra: Record<string, unknown>): Error => Object.assign(new Error(message), { isBoom: true, ...extra });

describe('errors of sendMessage', () => {
  it('tells a recipient without a WhatsApp account (item-not-found, 404) from failures worth retrying', () => {
    expect(isRecipientUnknown(boom('item-not-found', { data: 404 }))).toBe(true);
    expect(isRecipientUnknown(boom('Connection Closed', { data: null, output: { statusCode: 428 } }))).toBe(false);
    expect(isRecipientUnknown(new Error('Timed Out'))).toBe(false);
    expect(isRecipientUnknown('item-not-found')).toBe(false);
  });
});
