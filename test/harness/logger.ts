import { createLogger, type Logger } from '@wagw/lib';

/** A logger for tests: silent unless TEST_LOG_LEVEL is set. */
export const testLogger = (name = 'test'): Logger => createLogger(name, process.env.TEST_LOG_LEVEL ?? 'silent');
