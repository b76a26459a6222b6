export * from './instanceEvents';
