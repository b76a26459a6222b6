export * from './baileysConnector';
export * from './options';
export * from './kvAuthState';
export * from './sentStore';
export * from './disconnectPolicy';
export { MemoryTextBucket, NatsTextBucket, type TextBucket } from './textBucket';
export type { SocketFactory, WaSocket } from './socket';
