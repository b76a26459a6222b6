import { createLogger, logLevelFromEnv } from './logger';

describe('LOG_LEVEL', () => {
  it('unset or empty (as .env files often leave it) is the default, as for every other variable', () => {
    expect(logLevelFromEnv({})).toBe('info');
    expect(logLevelFromEnv({ LOG_LEVEL: '' })).toBe('info');
    expect(logLevelFromEnv({ LOG_LEVEL: '' }, 'warn')).toBe('warn');
    expect(logLevelFromEnv({ LOG_LEVEL: 'debug' })).toBe('debug');
    expect(logLevelFromEnv({ LOG_LEVEL: 'silent' })).toBe('silent');
  });

  it('an unknown level fails with one message listing the levels, not pino\'s "must be included in custom levels"', () => {
    expect(() => logLevelFromEnv({ LOG_LEVEL: 'verbose' })).toThrow('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"');
  });

  it('createLogger reads it: an empty LOG_LEVEL no longer crashes every process at load', () => {
    const saved = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = '';
    try {
      expect(createLogger('test').level).toBe('info');
    } finally {
      if (saved === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = saved;
    }
  });
});
