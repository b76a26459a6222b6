import { invalidArgument } from '../errors';

/** What a list of names is checked against, and the error code and words a 400 uses. */
export interface NameListRule<T extends string> {
  known: readonly T[];
  /** The parameter, for the message, e.g. `types`. */
  field: string;
  /** The error code of a bad list, e.g. `invalid_types`. */
  code: string;
  /** What the names are, for the message, e.g. `event type`. */
  noun: string;
}

const isKnown = <T extends string>(known: readonly T[], value: string): value is T => known.some((k) => k === value);

/**
 * A filter by name (`types=MessageSent,MessageRead`, `events=message.received`): comma-separated or already split,
 * trimmed, blanks dropped, deduplicated, in the known list's order. The one parser of every such filter in the API, so
 * each reads a bad list alike:
 * - absent or empty (`types=`, `[]`) = no filter (`[]`): what a form with nothing picked sends (the console's `events=`);
 * - only separators or blanks (`types=,`, `[' ']`) = 400: its sender meant to list names and listed none, and reading it
 *   as no filter would let through every name they meant to filter out;
 * - any unknown name = 400 that names it and lists the known ones.
 */
export const parseNameList = <T extends string>(value: string | readonly string[] | undefined, rule: NameListRule<T>): T[] => {
  const parts = typeof value === 'string' ? (value === '' ? [] : value.split(',')) : (value ?? []);
  const listed = parts.map((n) => n.trim()).filter((n) => n !== '');
  if (parts.length > 0 && listed.length === 0) {
    throw invalidArgument(
      rule.code,
      `${rule.field} names no ${rule.noun} (only commas or blanks); list some, or leave ${rule.field} empty or out for every ${rule.noun}; known: ${rule.known.join(', ')}`,
    );
  }
  const unknown = listed.filter((n) => !isKnown(rule.known, n));
  if (unknown.length > 0) {
    throw invalidArgument(rule.code, `Unknown ${rule.noun}(s): ${unknown.join(', ')}; known: ${rule.known.join(', ')}`);
  }
  return rule.known.filter((k) => listed.includes(k));
};
