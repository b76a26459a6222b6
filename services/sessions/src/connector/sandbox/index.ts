export * from './sandboxPlatform';
export * from './ledger';
export type { SandboxSent } from './sentRecords';
