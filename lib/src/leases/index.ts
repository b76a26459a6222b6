export * from './leaseStore';
export * from './ownership';
