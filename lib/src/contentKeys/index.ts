export * from './cipher';
export * from './contentKeys';
export * from './kvKeyBucket';
