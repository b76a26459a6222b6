export * from './instanceEvents';
export * from './messageEvents';
export * from './webhookEventTypes';
export * from './upcasters';
export * from './sealedFields';
export * from './historyEventTypes';
