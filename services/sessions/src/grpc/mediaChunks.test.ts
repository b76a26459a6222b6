import { MEDIA_CHUNK_BYTES, mediaChunks } from './sessionsHandlers';

describe('mediaChunks (StreamMedia frames)', () => {
  it('sends the head first, then the bytes in order, in chunks of at most 64 KiB', () => {
    const data = Buffer.alloc(3 * MEDIA_CHUNK_BYTES + 17, 0);
    for (let i = 0; i < data.length; i++) data[i] = i % 251;
    const [head, ...rest] = [...mediaChunks({ data, mimetype: 'application/pdf', filename: 'a.pdf' })];
    expect(head).toEqual({ mimetype: 'application/pdf', filename: 'a.pdf', size: data.length });
    expect(rest.map((chunk) => chunk.data!.length)).toEqual([MEDIA_CHUNK_BYTES, MEDIA_CHUNK_BYTES, MEDIA_CHUNK_BYTES, 17]);
    expect(Buffer.concat(rest.map((chunk) => chunk.data as Buffer)).equals(data)).toBe(true);
  });

  it('names a file without a name with an empty string, and sends no chunk for an empty file', () => {
    expect([...mediaChunks({ data: Buffer.alloc(0), mimetype: 'image/png', filename: null })]).toEqual([{ mimetype: 'image/png', filename: '', size: 0 }]);
  });
});
