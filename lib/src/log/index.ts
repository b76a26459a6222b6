export * from './logger';
export * from './throttle';
