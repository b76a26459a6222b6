/**
 * The headers of a received file (GET /v1/media). Its type and name come from the sender's WhatsApp message, as the
 * sender's app wrote them: anything may be in them, and a header takes only what HTTP allows. A value Node refuses
 * (a line break, a character past Latin-1) failed the answer with a 500; a name of thousands of characters made
 * headers that clients refuse (undici and Node read at most 16 KiB of them).
 */

/** The most code points of a sender's file name the answer names (its extension kept): a few KiB of headers at most. */
export const MAX_FILENAME_CHARS = 200;

/** The longest extension kept when a name is shortened (`.pdf`, `.docx`, `.tar.gz`); a longer "extension" is the name. */
const MAX_EXTENSION_CHARS = 16;

/** RFC 6838 names a type and subtype of at most 127 characters each; parameters add a few. */
const MAX_MEDIA_TYPE_CHARS = 255;

/** `type/subtype` (RFC 9110 tokens) and optional parameters in visible ASCII: what a Content-Type header carries. */
const MEDIA_TYPE = /^[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+(?:[ \t]*;[\x20-\x7e]*)?$/;

/** The sender's mimetype when a header can carry it; else (none, or not a media type) application/octet-stream. */
export const contentType = (mimetype: string): string =>
  mimetype.length <= MAX_MEDIA_TYPE_CHARS && MEDIA_TYPE.test(mimetype) ? mimetype : 'application/octet-stream';

/**
 * The sender's file name, well-formed (protobuf decodes a name of invalid UTF-8 to lone surrogates, which
 * encodeURIComponent refuses: each becomes U+FFFD) and at most MAX_FILENAME_CHARS code points, its extension kept.
 */
export const shortenedFilename = (filename: string): string => {
  // With the u flag a surrogate pair is one code point (not Cs): only lone surrogates match.
  const chars = Array.from(filename.replace(/\p{Cs}/gu, '\ufffd'));
  if (chars.length <= MAX_FILENAME_CHARS) return chars.join('');
  const dot = chars.lastIndexOf('.');
  const extension = dot > 0 && chars.length - dot <= MAX_EXTENSION_CHARS ? chars.slice(dot) : [];
  return [...chars.slice(0, MAX_FILENAME_CHARS - extension.length), ...extension].join('');
};

/** RFC 8187's attr-char leaves out `'()*`, which encodeURIComponent keeps as they are. */
const encodeExtValue = (text: string): string => encodeURIComponent(text).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** `Content-Disposition` for a file name from a sender: a plain ASCII fallback and the exact name (RFC 6266, 8187). */
export const contentDisposition = (filename: string | null): string => {
  if (!filename) return 'attachment';
  const name = shortenedFilename(filename);
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeExtValue(name)}`;
};
