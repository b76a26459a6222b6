import { MAX_TIMER_MS } from '@wagw/lib';
import { loadConfig } from './config';

const base = { AUTH_JWT_SECRET: 'x'.repeat(32), NATS_URL: 'nats://127.0.0.1:4222' };

describe('gateway config', () => {
  it('reads the defaults', () => {
    expect(loadConfig(base)).toMatchObject({ port: 3000, idleTimeoutMs: 300_000, sse: { heartbeatMs: 15_000 } });
  });

  it('refuses a missing NATS_URL: a replica without it would take revoked tokens and count its limits alone', () => {
    expect(() => loadConfig({ AUTH_JWT_SECRET: base.AUTH_JWT_SECRET })).toThrow(
      expect.objectContaining({ code: 'bad_config', message: expect.stringContaining('NATS_URL is required') as string }) as Error,
    );
  });

  it('reads CORS_ORIGINS (absent: no other origin) and refuses one a browser never sends at start', () => {
    expect(loadConfig(base).corsOrigins).toBeUndefined();
    expect(loadConfig({ ...base, CORS_ORIGINS: 'https://app.example.com,http://localhost:5173' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(() => loadConfig({ ...base, CORS_ORIGINS: 'https://app.example.com/' })).toThrow(
      expect.objectContaining({
        code: 'bad_config',
        message: expect.stringContaining('CORS_ORIGINS: https://app.example.com/ is no origin') as string,
      }) as Error,
    );
  });

  it('refuses a missing AUTH_JWT_SECRET as a bad variable (one line at start, no stack)', () => {
    expect(() => loadConfig({})).toThrow(
      expect.objectContaining({ code: 'bad_config', message: expect.stringContaining('AUTH_JWT_SECRET is required') as string }) as Error,
    );
  });

  it('refuses SSE_HEARTBEAT_MS=0, which wrote a heartbeat to every event stream every millisecond', () => {
    expect(() => loadConfig({ ...base, SSE_HEARTBEAT_MS: '0' })).toThrow(`SSE_HEARTBEAT_MS must be an integer from 1 to ${MAX_TIMER_MS}, got "0"`);
  });

  it('refuses a heartbeat no sooner than the idle timeout (idle streams would be closed); an idle timeout of 0 is none', () => {
    expect(() => loadConfig({ ...base, SSE_HEARTBEAT_MS: '300000' })).toThrow('SSE_HEARTBEAT_MS (300000) must be below HTTP_IDLE_TIMEOUT_MS (300000)');
    expect(loadConfig({ ...base, SSE_HEARTBEAT_MS: '300000', HTTP_IDLE_TIMEOUT_MS: '0' }).sse?.heartbeatMs).toBe(300_000);
  });

  it('refuses a PORT above 65535 with one message (the gateway died of a raw RangeError)', () => {
    expect(() => loadConfig({ ...base, PORT: '65536' })).toThrow('PORT must be an integer from 0 to 65535, got "65536"');
    expect(loadConfig({ ...base, PORT: '0' }).port).toBe(0);
  });

  it.each(['RATE_LIMIT_WINDOW_MS', 'RATE_LIMIT_SYNC_MS', 'HTTP_BODY_LIMIT', 'SSE_MAX_BUFFER_BYTES'])('refuses %s=0, which means nothing sane', (name) => {
    expect(() => loadConfig({ ...base, [name]: '0' })).toThrow(`${name} must be an integer`);
  });

  it('keeps 0 = unlimited for the rate limits', () => {
    expect(loadConfig({ ...base, RATE_LIMIT_ACCOUNT_MAX: '0', RATE_LIMIT_ANONYMOUS_MAX: '0' }).rateLimit).toMatchObject({ accountMax: 0, anonymousMax: 0 });
  });
});
