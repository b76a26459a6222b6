export * from './inputs';
export * from './rules';
