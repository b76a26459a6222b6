export * from './instanceEvents';
export * from './messageEvents';
