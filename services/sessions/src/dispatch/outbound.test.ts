import { typingMsFor } from './outbound';

describe('typing time', () => {
  const options = { msPerChar: 40, minMs: 500, maxMs: 4_000 };

  it('grows with the text, between its bounds, counting characters as people see them', () => {
    expect(typingMsFor('ok', options)).toBe(500);
    expect(typingMsFor('x'.repeat(50), options)).toBe(2_000);
    expect(typingMsFor('x'.repeat(5_000), options)).toBe(4_000);
    // One emoji is one character, not two UTF-16 units.
    expect(typingMsFor('😀'.repeat(50), options)).toBe(2_000);
  });

  it('is off at 0 ms per character', () => {
    expect(typingMsFor('x'.repeat(50), { ...options, msPerChar: 0 })).toBe(0);
  });
});
