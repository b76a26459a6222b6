import { envInt, envMs, envPort, MAX_TIMER_MS, natsSettingsFromEnv } from './env';

describe('env helpers', () => {
  it('envInt: unset or empty is the fallback; a malformed or out-of-range value names the variable', () => {
    expect(envInt({}, 'N', 7)).toBe(7);
    expect(envInt({ N: '' }, 'N', 7)).toBe(7);
    expect(envInt({ N: '0' }, 'N', 7)).toBe(0);
    expect(() => envInt({ N: 'x' }, 'N', 7)).toThrow('N must be a non-negative integer, got "x"');
    expect(() => envInt({ N: '0' }, 'N', 7, { min: 1 })).toThrow('N must be an integer of at least 1, got "0"');
    expect(() => envInt({ N: '11' }, 'N', 7, { min: 1, max: 10 })).toThrow('N must be an integer from 1 to 10, got "11"');
    // Beyond 2^53 Number() rounds: the value read would not be the value written.
    expect(() => envInt({ N: '99999999999999999999' }, 'N', 7)).toThrow('N must be a non-negative integer');
  });

  it('envPort: 0-65535, with one clear message above', () => {
    expect(envPort({ PORT: '0' }, 'PORT', 3000)).toBe(0);
    expect(envPort({ PORT: '65535' }, 'PORT', 3000)).toBe(65_535);
    expect(() => envPort({ PORT: '65536' }, 'PORT', 3000)).toThrow('PORT must be an integer from 0 to 65535, got "65536"');
    expect(() => envPort({ OPS_PORT: '99999' }, 'OPS_PORT', 9101)).toThrow('OPS_PORT must be an integer from 0 to 65535');
  });

  it('envMs: refuses what setTimeout would overflow (it would fire at once), and 0 where asked', () => {
    expect(envMs({ T: String(MAX_TIMER_MS) }, 'T', 1)).toBe(MAX_TIMER_MS);
    expect(() => envMs({ T: String(MAX_TIMER_MS + 1) }, 'T', 1)).toThrow(`T must be an integer from 0 to ${MAX_TIMER_MS}, got "${MAX_TIMER_MS + 1}"`);
    expect(envMs({ T: '0' }, 'T', 1)).toBe(0);
    expect(() => envMs({ T: '0' }, 'T', 1, { min: 1 })).toThrow(`T must be an integer from 1 to ${MAX_TIMER_MS}, got "0"`);
  });

  it('CHECKPOINT_EVERY_MS: 0 (a checkpoint timer that would spin) and overflowing values are refused', () => {
    const env = { NATS_URL: 'nats://127.0.0.1:4222' };
    expect(() => natsSettingsFromEnv({ ...env, CHECKPOINT_EVERY_MS: '0' })).toThrow('CHECKPOINT_EVERY_MS must be');
    expect(() => natsSettingsFromEnv({ ...env, CHECKPOINT_EVERY_MS: '3000000000' })).toThrow('CHECKPOINT_EVERY_MS must be');
  });

  it('NATS_URL: required, as a bad setting (exit 78 at start, one line); each server a nats:// or tls:// URL or host:port', () => {
    expect(() => natsSettingsFromEnv({})).toThrow(
      expect.objectContaining({ code: 'bad_config', message: expect.stringContaining('NATS_URL is required') as string }) as Error,
    );
    for (const bad of ['foo://bar', 'http://127.0.0.1:4222', 'nats://', 'nats://127.0.0.1:4222,bogus://x', 'nats://[::1']) {
      expect(() => natsSettingsFromEnv({ NATS_URL: bad })).toThrow(
        expect.objectContaining({ code: 'bad_config', message: expect.stringMatching(/^NATS_URL: ".*" is not a NATS server URL/) as string }) as Error,
      );
    }
    for (const good of [
      'nats://127.0.0.1:4222',
      'tls://nats.example:4222',
      '127.0.0.1:4222',
      'nats://a:4222, nats://b:4222,nats://c:4222',
      'nats://u:p@[::1]:4222',
    ]) {
      expect(natsSettingsFromEnv({ NATS_URL: good }).natsUrl).toBe(good);
    }
  });
});
