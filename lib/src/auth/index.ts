export * from './tokens';
export * from './revocation';
