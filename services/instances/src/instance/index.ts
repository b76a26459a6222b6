export * from './commands';
export * from './state';
export * from './decider';
