export * from './webhookSecretStore';
