export * from './sandboxPlatform';
export * from './ledger';
