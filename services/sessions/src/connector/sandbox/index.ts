export * from './sandboxPlatform';
