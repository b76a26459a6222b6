export * from './logger';
export * from './throttle';
export * from './redactUrl';
export * from './consoleToLogger';
