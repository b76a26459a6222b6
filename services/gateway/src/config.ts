import { envInt, envOptional, envString } from '@wagw/lib';

export interface GatewayConfig {
  host: string;
  port: number;
  instancesAddress: string;
  webhooksAddress: string;
  sessionsAddress: string;
  sandbox: boolean;
  jwtSecret: string;
  bodyLimit: number;
}

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => {
  const jwtSecret = envOptional(env, 'AUTH_JWT_SECRET');
  if (!jwtSecret) throw new Error('AUTH_JWT_SECRET is required (the launcher generates one under DATA_DIR)');
  return {
    host: envString(env, 'HOST', '127.0.0.1'),
    port: envInt(env, 'PORT', 3000),
    instancesAddress: envString(env, 'INSTANCES_ADDRESS', '127.0.0.1:50051'),
    webhooksAddress: envString(env, 'WEBHOOKS_ADDRESS', '127.0.0.1:50052'),
    sessionsAddress: envString(env, 'SESSIONS_ADDRESS', '127.0.0.1:50053'),
    sandbox: envString(env, 'WA_CONNECTOR', 'baileys') === 'sandbox',
    jwtSecret,
    bodyLimit: envInt(env, 'HTTP_BODY_LIMIT', 64 * 1024),
  };
};
