export * from './inputs';
