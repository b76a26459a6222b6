import { parseNameList } from './nameList';

const rule = { known: ['a.one', 'b.two', 'c.three'] as const, code: 'invalid_types', noun: 'event type' };

describe('parseNameList', () => {
  it('takes a comma-separated list, trimmed and deduplicated, in the known order', () => {
    expect(parseNameList(' c.three, a.one ,c.three', rule)).toEqual(['a.one', 'c.three']);
  });

  it('takes a list already split', () => {
    expect(parseNameList(['b.two'], rule)).toEqual(['b.two']);
  });

  it('reads nothing listed as no filter', () => {
    expect(parseNameList(undefined, rule)).toEqual([]);
    expect(parseNameList('', rule)).toEqual([]);
    expect(parseNameList(' , ', rule)).toEqual([]);
  });

  it('refuses an unknown name with a 400 that names it and the known ones', () => {
    let thrown: unknown;
    try {
      parseNameList('a.one,zz', rule);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ kind: 'invalid_argument', code: 'invalid_types', message: 'Unknown event type(s): zz; known: a.one, b.two, c.three' });
  });
});
