import { invalidArgument } from '../errors';

/** What a list of names is checked against, and the error code and noun a 400 uses for an unknown one. */
export interface NameListRule<T extends string> {
  known: readonly T[];
  /** The error code of an unknown name, e.g. `invalid_types`. */
  code: string;
  /** What the names are, for the message, e.g. `event type`. */
  noun: string;
}

const isKnown = <T extends string>(known: readonly T[], value: string): value is T => known.some((k) => k === value);

/**
 * A filter by name (`types=MessageSent,MessageRead`, `events=message.received`): comma-separated or already split,
 * trimmed, blanks dropped, deduplicated, in the known list's order; nothing listed = no filter (`[]`). Any unknown
 * name is a 400 that names it and lists the known ones. The one parser of every such filter in the API.
 */
export const parseNameList = <T extends string>(value: string | readonly string[] | undefined, rule: NameListRule<T>): T[] => {
  const listed = (typeof value === 'string' ? value.split(',') : (value ?? [])).map((n) => n.trim()).filter((n) => n !== '');
  const unknown = listed.filter((n) => !isKnown(rule.known, n));
  if (unknown.length > 0) {
    throw invalidArgument(rule.code, `Unknown ${rule.noun}(s): ${unknown.join(', ')}; known: ${rule.known.join(', ')}`);
  }
  return rule.known.filter((k) => listed.includes(k));
};
