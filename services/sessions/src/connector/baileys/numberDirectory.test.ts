import { NumberDirectory } from './numberDirectory';

const REGISTERED = '4915112345678';
const UNREGISTERED = '4915100000000';

/** A lookup as Baileys' onWhatsApp answers: the registered numbers only; `undefined` when its query timed out. */
const answering = (registered: string[]) => {
  const asked: string[][] = [];
  const lookup = async (...jids: string[]) => {
    asked.push(jids);
    return jids.filter((jid) => registered.some((n) => jid.startsWith(n))).map((jid) => ({ jid, exists: true }));
  };
  return { lookup, asked };
};

describe('number directory (which numbers are on WhatsApp, cached)', () => {
  it('answers each number, asking WhatsApp once per number within the TTL', async () => {
    const directory = new NumberDirectory();
    const { lookup, asked } = answering([REGISTERED]);
    expect(await directory.check(lookup, [REGISTERED, UNREGISTERED])).toEqual([
      { number: REGISTERED, exists: true, jid: `${REGISTERED}@s.whatsapp.net` },
      { number: UNREGISTERED, exists: false, jid: null },
    ]);
    await directory.check(lookup, [REGISTERED, UNREGISTERED]);
    expect(asked).toHaveLength(1);
  });

  it('fails a check WhatsApp did not answer, and keeps nothing of it: the next check asks again', async () => {
    const directory = new NumberDirectory();
    await expect(directory.check(async () => undefined, [REGISTERED])).rejects.toThrow(/did not answer/);
    const { lookup, asked } = answering([REGISTERED]);
    expect(await directory.check(lookup, [REGISTERED])).toEqual([{ number: REGISTERED, exists: true, jid: `${REGISTERED}@s.whatsapp.net` }]);
    expect(asked).toEqual([[`${REGISTERED}@s.whatsapp.net`]]);
  });
});
