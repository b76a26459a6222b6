export * from './lanes';
export * from './turnBatcher';
