export * from './serviceBase';
