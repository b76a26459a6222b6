export * from './metrics';
export * from './opsRoutes';
export * from './opsServer';
