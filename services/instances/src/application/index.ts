export * from './instanceDirectory';
export * from './instancesService';
