import { contentDisposition, contentType, shortenedFilename } from './fileHeaders';

describe("a received file's headers, from the type and name its sender gave it", () => {
  it('keeps a media type a header carries, parameters and all', () => {
    expect(contentType('application/pdf')).toBe('application/pdf');
    expect(contentType('text/plain; charset=utf-8')).toBe('text/plain; charset=utf-8');
  });

  it.each([
    ['', 'none'],
    ['application/pdf\r\nx-injected: 1', 'a line break'],
    ['image/png; name=\u20ac', 'a character past Latin-1'],
    ['pdf', 'no subtype'],
  ])('answers application/octet-stream for %j (%s)', (mimetype) => {
    expect(contentType(mimetype)).toBe('application/octet-stream');
  });

  it('names a file whose name holds a lone surrogate with U+FFFD in its place (encodeURIComponent threw: a 500)', () => {
    expect(contentDisposition('contract\ud800.pdf')).toBe(`attachment; filename="contract_.pdf"; filename*=UTF-8''contract%EF%BF%BD.pdf`);
  });

  it('shortens a long name to 200 code points, keeping its extension and never splitting a surrogate pair', () => {
    expect(shortenedFilename(`${'\u{1F600}'.repeat(300)}.docx`)).toBe(`${'\u{1F600}'.repeat(195)}.docx`);
    // A "extension" of more than 16 characters is part of the name.
    expect(shortenedFilename(`${'a'.repeat(150)}.${'b'.repeat(100)}`)).toBe(`${'a'.repeat(150)}.${'b'.repeat(49)}`);
    expect(shortenedFilename('a.pdf')).toBe('a.pdf');
  });

  it("%-encodes what RFC 8187 does not allow bare in filename* (encodeURIComponent keeps ' ( ) *)", () => {
    expect(contentDisposition("it's (1)*.pdf")).toBe(`attachment; filename="it's (1)*.pdf"; filename*=UTF-8''it%27s%20%281%29%2A.pdf`);
  });
});
