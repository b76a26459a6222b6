export * from './appError';
