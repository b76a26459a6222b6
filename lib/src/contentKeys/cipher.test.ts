import { newContentKey, openContent, sealContent } from './cipher';

describe('content cipher (AES-256-GCM)', () => {
  const content = { text: 'Your order has shipped', 'media.filename': 'invoice.pdf' };

  it('opens what it sealed, with the same key and place', () => {
    const key = newContentKey();
    const sealed = sealContent(content, key, 'I.message.m1\u0000MessageAccepted');
    expect(sealed.kid).toBe(key.kid);
    expect(openContent(sealed, key.key, 'I.message.m1\u0000MessageAccepted')).toEqual(content);
  });

  it('hides the plaintext and never repeats a ciphertext (a fresh iv per event)', () => {
    const key = newContentKey();
    const a = sealContent(content, key, 'p');
    const b = sealContent(content, key, 'p');
    expect(JSON.stringify(a)).not.toContain('shipped');
    expect(Buffer.from(a.ct, 'base64').toString('latin1')).not.toContain('shipped');
    expect(a.iv).not.toBe(b.iv);
    expect(a.ct).not.toBe(b.ct);
  });

  it('gives every event an iv of its own, across refills of the iv pool', () => {
    const key = newContentKey();
    const ivs = Array.from({ length: 3_000 }, () => sealContent(content, key, 'p').iv);
    expect(new Set(ivs).size).toBe(3_000);
    expect(ivs.every((iv) => Buffer.from(iv, 'base64').length === 12)).toBe(true);
  });

  it('refuses another key, another place, or a changed ciphertext', () => {
    const key = newContentKey();
    const sealed = sealContent(content, key, 'I.message.m1\u0000MessageAccepted');
    expect(() => openContent(sealed, newContentKey().key, 'I.message.m1\u0000MessageAccepted')).toThrow();
    expect(() => openContent(sealed, key.key, 'I.message.m2\u0000MessageAccepted')).toThrow();
    const bytes = Buffer.from(sealed.ct, 'base64');
    bytes[0] = bytes[0]! ^ 1;
    expect(() => openContent({ ...sealed, ct: bytes.toString('base64') }, key.key, 'I.message.m1\u0000MessageAccepted')).toThrow();
  });

  it('makes keys of 32 random bytes with ids that differ', () => {
    const [a, b] = [newContentKey(), newContentKey()];
    expect(a.key).toHaveLength(32);
    expect(a.kid).not.toBe(b.kid);
    expect(a.key.equals(b.key)).toBe(false);
  });
});
