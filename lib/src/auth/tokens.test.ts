import { AppError } from '../errors';
import { createTokenVerifier, issueToken, parseScopes } from './tokens';

const SECRET = 'a-secret-that-is-long-enough-for-hs256-0123456789';
const INSTANCE = '0123456789ABCDEF0123';
const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error.code;
  }
  return 'no error';
};

describe('tokens', () => {
  const verify = createTokenVerifier(SECRET);

  it('issues an account token with an id and every scope', () => {
    const credential = verify(issueToken(SECRET, 'acme', 60));
    expect(credential).toEqual({
      account: 'acme',
      tokenId: expect.stringMatching(/^[0-9a-f]{32}$/),
      instanceId: null,
      scopes: ['send', 'read', 'manage'],
      expiresAt: expect.any(Number),
    });
    expect(Math.abs(credential.expiresAt - (Date.now() + 60_000))).toBeLessThan(5_000);
    expect(verify(issueToken(SECRET, 'acme', 60)).tokenId).not.toBe(credential.tokenId);
  });

  it('issues an instance token limited to its instance and scopes', () => {
    expect(verify(issueToken(SECRET, 'acme', 60, { instanceId: INSTANCE, scopes: ['send'] }))).toMatchObject({ instanceId: INSTANCE, scopes: ['send'] });
  });

  it('never issues a token without an expiry, and refuses an expired one with token_expired', async () => {
    expect(codeOf(() => issueToken(SECRET, 'acme', 0))).toBe('bad_expiry');
    const token = issueToken(SECRET, 'acme', 1);
    // Verified (and so remembered) while valid: remembered is no longer valid once it expired.
    expect(verify(token).account).toBe('acme');
    await new Promise((r) => setTimeout(r, 1_100));
    expect(codeOf(() => verify(token))).toBe('token_expired');
  });

  it('parses scopes in their documented order and refuses unknown ones', () => {
    expect(parseScopes('manage, send')).toEqual(['send', 'manage']);
    expect(codeOf(() => parseScopes('send,admin'))).toBe('invalid_scopes');
    expect(codeOf(() => parseScopes(''))).toBe('invalid_scopes');
  });

  it('refuses a token differing by one character from one it verified before (a remembered token is matched whole)', () => {
    const token = issueToken(SECRET, 'acme', 60);
    expect(verify(token).account).toBe('acme');
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const otherAccount = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'mallory' })).toString('base64url');
    expect(codeOf(() => verify(`${header}.${otherAccount}.${signature}`))).toBe('invalid_token');
    // The first character: the last one's low bits are base64 padding, which a decoder ignores.
    const flipped = `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect(codeOf(() => verify(`${header}.${payload}.${flipped}`))).toBe('invalid_token');
    expect(codeOf(() => verify(`${token} `))).toBe('invalid_token');
    expect(verify(token).account).toBe('acme');
  });

  it('refuses a token signed with another key, and a missing one, each with its own code', () => {
    expect(codeOf(() => verify(issueToken(`${SECRET}x`, 'acme', 60)))).toBe('invalid_token');
    expect(codeOf(() => verify(undefined))).toBe('missing_token');
  });
});
