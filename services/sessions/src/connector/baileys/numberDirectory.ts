import type { NumberCheck } from '../port';
import { TtlCache } from './ttlCache';

/** The lookup a socket offers (Baileys' `onWhatsApp`: a usync contact query; unregistered numbers are left out). */
export type NumberLookup = (...jids: string[]) => Promise<Array<{ jid: string; exists: boolean }> | undefined>;

/** A number with an account keeps it for long; one without may sign up, so it is asked again sooner. */
const FOUND_TTL_MS = 24 * 3_600_000;
const MISSING_TTL_MS = 3_600_000;
const MAX_ENTRIES = 20_000;

const digitsOf = (jid: string): string => jid.split(/[:@]/, 1)[0] ?? '';

/**
 * Which numbers are on WhatsApp, per instance, cached: Baileys 7 no longer fails a send to a number without an
 * account (it finds no device and has nobody to encrypt for), so a send asks here first; and bulk checks are a
 * ban signal, so each number is asked at most once per TTL.
 */
export class NumberDirectory {
  private readonly found = new TtlCache(FOUND_TTL_MS, MAX_ENTRIES);
  private readonly missing = new TtlCache(MISSING_TTL_MS, MAX_ENTRIES);

  /** The status of each number (international digits), asking WhatsApp only about the ones not cached. */
  async check(lookup: NumberLookup, numbers: readonly string[]): Promise<NumberCheck[]> {
    const unknown = [...new Set(numbers)].filter((number) => this.cached(number) === undefined);
    if (unknown.length > 0) {
      const answers = await lookup(...unknown.map((number) => `${number}@s.whatsapp.net`));
      // No answer (Baileys' query timed out: a socket gone silent or dropped under it) says nothing of any number. Taken
      // as "none registered", it failed a send to a registered number as recipient_not_on_platform and kept the
      // number as such for an hour; thrown, the send is retried like any platform error, and nothing is cached.
      if (answers === undefined) throw new Error('WhatsApp did not answer the number check (timed out)');
      const registered = new Map(answers.filter((answer) => answer.exists).map((answer) => [digitsOf(answer.jid), answer.jid]));
      for (const number of unknown) {
        const jid = registered.get(number);
        if (jid) this.found.set(number, jid);
        else this.missing.set(number, true);
      }
    }
    return numbers.map((number) => {
      const jid = this.cached(number) ?? null;
      return { number, exists: jid !== null, jid };
    });
  }

  private cached(number: string): string | null | undefined {
    const jid = this.found.get<string>(number);
    if (jid !== undefined) return jid;
    return this.missing.get<boolean>(number) ? null : undefined;
  }
}
