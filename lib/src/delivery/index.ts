export * from './signature';
export * from './ssrfGuard';
export * from './retrySchedule';
export * from './deliveryClient';
