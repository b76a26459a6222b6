import { fileNameOf } from './mediaFetcher';

describe('fileNameOf', () => {
  it("names a file after its URL path's last segment, decoded", () => {
    expect(fileNameOf('https://cdn.example/docs/Quarterly%20report.pdf?x=1')).toBe('Quarterly report.pdf');
    expect(fileNameOf('https://cdn.example/')).toBe('file');
  });
  it('keeps a segment that does not decode as it is written, instead of throwing', () => {
    expect(fileNameOf('http://127.0.0.1:8080/bad%E0%A4%A')).toBe('bad%E0%A4%A');
  });
});
