export * from './appError';
export * from './unrouted';
