export * from './connection';
export * from './localServer';
export * from './serverVersion';
