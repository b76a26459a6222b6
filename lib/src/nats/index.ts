export * from './connection';
export * from './localServer';
export * from './serverVersion';
export * from './guard';
export * from './replyInbox';
export * from './localCluster';
export * from './startupRetry';
export * from './provision';
