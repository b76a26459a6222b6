import type { Credential } from '@wagw/lib';
import { credentialRefusal, noRevocations, type Revocations } from './revocations';

const credential: Credential = {
  account: 'acme',
  tokenId: '0123456789abcdef0123456789abcdef',
  instanceId: null,
  scopes: ['send', 'read', 'manage'],
  expiresAt: Date.now() + 60_000,
};

describe('credentialRefusal', () => {
  it('refuses every token with a 503 while the replica has not loaded the revoked ones (a revoked one would pass)', () => {
    const loading: Revocations = { ...noRevocations, loaded: () => false };
    expect(credentialRefusal(credential, loading)).toMatchObject({ kind: 'unavailable', code: 'revocations_loading' });
  });

  it('refuses a revoked token, then an expired one, and passes the others', () => {
    const revoked: Revocations = { ...noRevocations, isRevoked: (c) => c.tokenId === credential.tokenId };
    expect(credentialRefusal(credential, revoked)).toMatchObject({ kind: 'unauthenticated', code: 'token_revoked' });
    expect(credentialRefusal({ ...credential, expiresAt: Date.now() - 1 }, noRevocations)).toMatchObject({ code: 'token_expired' });
    expect(credentialRefusal(credential, noRevocations)).toBeNull();
  });
});
