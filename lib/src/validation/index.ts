export * from './inputs';
export * from './rules';
export * from './paging';
export * from './nameList';
export * from './sendContent';
