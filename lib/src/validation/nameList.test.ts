import { parseNameList } from './nameList';

const rule = { known: ['a.one', 'b.two', 'c.three'] as const, field: 'types', code: 'invalid_types', noun: 'event type' };

const thrownBy = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('parseNameList', () => {
  it('takes a comma-separated list, trimmed and deduplicated, in the known order', () => {
    expect(parseNameList(' c.three, a.one ,c.three', rule)).toEqual(['a.one', 'c.three']);
  });

  it('takes a list already split', () => {
    expect(parseNameList(['b.two'], rule)).toEqual(['b.two']);
  });

  it('takes a list with a stray separator among the names it lists', () => {
    expect(parseNameList('c.three, a.one,', rule)).toEqual(['a.one', 'c.three']);
    expect(parseNameList(['', 'b.two'], rule)).toEqual(['b.two']);
  });

  it('reads an absent or empty list as no filter', () => {
    expect(parseNameList(undefined, rule)).toEqual([]);
    expect(parseNameList('', rule)).toEqual([]);
    expect(parseNameList([], rule)).toEqual([]);
  });

  // Its sender meant to list names and listed none: read as no filter, it would let through what they meant to filter out.
  it.each<string | string[]>([',', ' , ', ',,', ' ', ['', ' ']])('refuses %j, which lists no name, with a 400 that says so', (value) => {
    expect(thrownBy(() => parseNameList(value, rule))).toMatchObject({
      kind: 'invalid_argument',
      code: 'invalid_types',
      message: 'types names no event type (only commas or blanks); list some, or leave types empty or out for every event type; known: a.one, b.two, c.three',
    });
  });

  it('refuses an unknown name with a 400 that names it and the known ones', () => {
    expect(thrownBy(() => parseNameList('a.one,zz', rule))).toMatchObject({
      kind: 'invalid_argument',
      code: 'invalid_types',
      message: 'Unknown event type(s): zz; known: a.one, b.two, c.three',
    });
  });
});
