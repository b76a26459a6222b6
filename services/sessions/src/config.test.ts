import { MAX_TIMER_MS } from '@wagw/lib';
import { loadConfig, QR_WAIT_MAX_MS } from './config';

// The sandbox connector: the Baileys options read files and URLs this test has no use for.
const base = { NATS_URL: 'nats://127.0.0.1:4222', WA_CONNECTOR: 'sandbox' };

describe('sessions config', () => {
  it('reads the defaults', () => {
    expect(loadConfig(base)).toMatchObject({ leaseTtlMs: 10_000, leaseRenewMs: 3_000, qrWaitMs: 20_000, opsPort: 9103 });
  });

  it('refuses a TYPING_MIN_MS above TYPING_MAX_MS, and a MEDIA_MAX_BYTES of 0 (every media send too large)', () => {
    expect(() => loadConfig({ ...base, TYPING_MIN_MS: '5000', TYPING_MAX_MS: '100' })).toThrow('TYPING_MIN_MS (5000) must be at most TYPING_MAX_MS (100)');
    expect(loadConfig({ ...base, TYPING_MIN_MS: '100', TYPING_MAX_MS: '100' }).typing).toMatchObject({ minMs: 100, maxMs: 100 });
    expect(() => loadConfig({ ...base, MEDIA_MAX_BYTES: '0' })).toThrow('MEDIA_MAX_BYTES must be an integer of at least 1, got "0"');
  });

  it('refuses a LEASE_RENEW_MS at or above LEASE_TTL_MS, with which every lease lapsed between renewals', () => {
    expect(() => loadConfig({ ...base, LEASE_TTL_MS: '15000', LEASE_RENEW_MS: '20000' })).toThrow(
      'LEASE_RENEW_MS (20000) must be at most half of LEASE_TTL_MS (15000)',
    );
    expect(() => loadConfig({ ...base, LEASE_RENEW_MS: '10000' })).toThrow('LEASE_RENEW_MS (10000) must be at most half of LEASE_TTL_MS (10000)');
    expect(() => loadConfig({ ...base, LEASE_RENEW_MS: '5001' })).toThrow('at most half');
    expect(loadConfig({ ...base, LEASE_RENEW_MS: '5000' }).leaseRenewMs).toBe(5_000);
    expect(loadConfig({ ...base, LEASE_TTL_MS: '3000', LEASE_RENEW_MS: '750' })).toMatchObject({ leaseTtlMs: 3_000, leaseRenewMs: 750 });
  });

  it.each([
    'LEASE_TTL_MS',
    'LEASE_RENEW_MS',
    'LEASE_CLAIM_EVERY_MS',
    'QR_WAIT_MS',
    'SEND_TTL_MS',
    'MEDIA_TIMEOUT_MS',
    'MEDIA_DOWNLOADS_MAX',
    'SANDBOX_QR_INTERVAL_MS',
  ])('refuses %s=0, which means nothing sane', (name) => {
    expect(() => loadConfig({ ...base, [name]: '0' })).toThrow(`${name} must be an integer`);
  });

  it('keeps 0 = off where the README says so', () => {
    const config = loadConfig({ ...base, SEND_PACING_MS: '0', TYPING_MS_PER_CHAR: '0', SEND_DAILY_CAP: '0', NUMBER_CHECKS_BURST: '0' });
    expect(config).toMatchObject({ pacingMs: 0, typing: { msPerChar: 0 }, sendQuotas: { dailyCap: 0 }, numberChecks: { burst: 0 } });
  });

  it(`refuses a QR_WAIT_MS above ${QR_WAIT_MAX_MS}, where the wait was silently cut`, () => {
    expect(() => loadConfig({ ...base, QR_WAIT_MS: '90000' })).toThrow(`QR_WAIT_MS must be an integer from 1 to ${QR_WAIT_MAX_MS}, got "90000"`);
    expect(loadConfig({ ...base, QR_WAIT_MS: String(QR_WAIT_MAX_MS) }).qrWaitMs).toBe(QR_WAIT_MAX_MS);
  });

  it('refuses durations setTimeout would overflow, and OPS_PORT above 65535', () => {
    expect(() => loadConfig({ ...base, SEND_RESTRICTED_PAUSE_MS: String(MAX_TIMER_MS + 1) })).toThrow('SEND_RESTRICTED_PAUSE_MS must be an integer from 0');
    expect(() => loadConfig({ ...base, OPS_PORT: '70000' })).toThrow('OPS_PORT must be an integer from 0 to 65535, got "70000"');
  });
});
