export * from './sandboxPlatform';
export * from './ledger';
export type { SandboxSent } from './sentRecords';
export type { SandboxReadMark } from './sandboxRef';
export { SANDBOX_MEDIA_KINDS, type SandboxMediaKind } from './sandboxMedia';
export { SandboxNotInGroup } from './sandboxChats';
