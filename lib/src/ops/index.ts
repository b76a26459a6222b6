export * from './badConfig';
export * from './metrics';
export * from './opsRoutes';
export * from './opsServer';
export * from './runMain';
export * from './startup';
