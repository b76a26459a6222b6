export * from './commands';
export * from './state';
export * from './connectionFacts';
export * from './decider';
export * from './instanceStates';
export * from './checkpointer';
export * from './rebuild';
