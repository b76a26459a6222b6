export * from './instanceEvents';
export * from './messageEvents';
export * from './upcasters';
