import { assertCallableUrl } from './inputs';
import { AT_CLOCK_SKEW_MS, exceedsCharacters, parseIsoTime, parsePastTime } from './rules';

describe('assertCallableUrl', () => {
  const code = (url: string): string | null => {
    try {
      assertCallableUrl(url, 'webhook_url', 'invalid_webhook_url');
      return null;
    } catch (error) {
      return (error as { code: string }).code;
    }
  };
  it('takes an absolute http(s) URL, with a query and percent-encoded parts', () => {
    expect(code('https://hooks.example/wa?x=1&y=%20z')).toBeNull();
    expect(code('http://127.0.0.1:8080/a%2Fb')).toBeNull();
    expect(code('https://hooks.example:1/a')).toBeNull();
    expect(code('https://hooks.example:65535/a')).toBeNull();
    expect(code('HTTPS://hooks.example/a')).toBeNull();
    expect(code('https://hooks.example/a?q=%5C')).toBeNull();
  });
  it('counts its length in characters as the JSON schema does (an emoji is one), not in UTF-16 units', () => {
    const base = 'https://hooks.example/';
    expect(code(base + '😀'.repeat(2048 - base.length))).toBeNull();
    expect(code(base + '😀'.repeat(2049 - base.length))).toBe('invalid_webhook_url');
  });
  it.each([
    ['a leading space', ' https://hooks.example/a'],
    ['a trailing space', 'https://hooks.example/a '],
    ['a tab the parser would drop', 'https://hooks.example/a\tb'],
    ['a line break the parser would drop', 'https://hooks.example/a\r\nb'],
    ['a NUL', 'https://hooks.example/a\u0000'],
    ['a user name and password', 'https://user:pw@hooks.example/a'],
    ['another scheme', 'ftp://hooks.example/a'],
    ['no scheme', 'hooks.example/a'],
    ['port 0, which nothing can be reached on', 'http://hooks.example:0/a'],
    ['port 0 written with leading zeros', 'https://hooks.example:000/a'],
    ['a port beyond 65535', 'http://hooks.example:99999/a'],
    ['nothing', ''],
    // The parser calls http://127.0.0.1:31101/x for each of these: stored and shown as written, called otherwise.
    ['backslashes for slashes', 'http:\\\\127.0.0.1:31101\\x'],
    ['a backslash in the path', 'https://hooks.example/a\\b'],
    ['no slashes after the scheme', 'http:127.0.0.1:31101/x'],
    ['one slash after the scheme', 'https:/hooks.example/x'],
    ['three slashes after the scheme', 'http:///127.0.0.1:31101/x'],
  ])('refuses %s', (_name, url) => {
    expect(code(url)).toBe('invalid_webhook_url');
  });
});

describe('parseIsoTime', () => {
  it('reads a time with a time zone', () => {
    expect(parseIsoTime('2026-11-23T10:00:00+02:00', 'at').toISOString()).toBe('2026-11-23T08:00:00.000Z');
    expect(parseIsoTime('2028-02-29T00:00Z', 'at').toISOString()).toBe('2028-02-29T00:00:00.000Z');
    // RFC 3339 §5.6: T and Z may be lower case.
    expect(parseIsoTime('2026-11-28t05:00:00z', 'at').toISOString()).toBe('2026-11-28T05:00:00.000Z');
  });
  it('reads the years 0000-0099 as themselves (a time before any event: the query finds nothing, it is not refused)', () => {
    expect(parseIsoTime('0050-06-01T00:00:00Z', 'at').toISOString()).toBe('0050-06-01T00:00:00.000Z');
    expect(parseIsoTime('0000-02-29T12:00:00Z', 'since').toISOString()).toBe('0000-02-29T12:00:00.000Z');
    expect(() => parseIsoTime('0001-02-29T12:00:00Z', 'since')).toThrow(/does not exist/);
  });
  it.each(['2026-11-31T10:00:00Z', '2026-02-29T10:00:00Z', '2026-11-23T24:00:00Z', '2026-11-23T05:60:00Z', '2026-11-23T05:00:60Z', '2026-11-23', 'yesterday'])(
    'refuses %s instead of reading another day',
    (value) => {
      let code: string | null = null;
      try {
        parseIsoTime(value, 'at');
      } catch (error) {
        code = (error as { code: string }).code;
      }
      expect(code).toBe('invalid_time');
    },
  );
});

describe('parseIsoTime in a query', () => {
  it('says how to send the + of an offset when it arrived as a space (a query decodes + as a space)', () => {
    expect(() => parseIsoTime('2026-11-24T10:00:00 14:00', 'at')).toThrow(/send the \+ of the offset as %2B/);
    expect(() => parseIsoTime('yesterday', 'at')).not.toThrow(/%2B/);
  });
  it('says a day or time that does not exist is that, not how to send a + (there is none)', () => {
    for (const value of ['2026-02-30T00:00:00Z', '2026-11-28T24:00:00Z', '2026-11-28T05:00:60Z']) {
      expect(() => parseIsoTime(value, 'since')).toThrow(`since names a day or a time of day that does not exist: ${value}`);
    }
  });
});

describe('exceedsCharacters', () => {
  it('counts characters as the JSON schemas do: an emoji is one', () => {
    expect(exceedsCharacters('😀'.repeat(3_000), 4_096)).toBe(false);
    expect(exceedsCharacters('😀'.repeat(4_097), 4_096)).toBe(true);
    expect(exceedsCharacters('x'.repeat(4_096), 4_096)).toBe(false);
    expect(exceedsCharacters('x'.repeat(4_097), 4_096)).toBe(true);
  });
});

describe('parsePastTime', () => {
  const now = new Date('2026-11-24T10:00:00.000Z');
  const codeOf = (value: string): string | null => {
    try {
      parsePastTime(value, 'at', now);
      return null;
    } catch (error) {
      return (error as { code: string }).code;
    }
  };

  it('takes a moment up to now, and one ahead of it by no more than a clock may be', () => {
    expect(parsePastTime('2026-11-24T09:59:59Z', 'at', now).toISOString()).toBe('2026-11-24T09:59:59.000Z');
    expect(codeOf('2026-11-24T10:00:00Z')).toBeNull();
    expect(codeOf(new Date(now.getTime() + AT_CLOCK_SKEW_MS).toISOString())).toBeNull();
  });

  it('refuses a moment still to come with 400 invalid_time that says so, rather than answer the present for it', () => {
    expect(codeOf(new Date(now.getTime() + AT_CLOCK_SKEW_MS + 1).toISOString())).toBe('invalid_time');
    expect(() => parsePastTime('2026-11-24T12:00:00+01:00', 'at', now)).toThrow(/at is in the future/);
    expect(codeOf('tomorrow')).toBe('invalid_time');
  });
});
