import { envBool, envInt, envPort, envString, natsSettingsFromEnv, type NatsSettings } from '@wagw/lib';

export interface InstancesConfig extends NatsSettings {
  /** gRPC listen address, host:port (port 0 = any free port). */
  grpcAddress: string;
  opsHost: string;
  opsPort: number;
  /** Allow webhook URLs that resolve to loopback, private, link-local or metadata addresses. */
  allowPrivateNetworks: boolean;
  /** `INSTANCE_QUOTA`: instances an account may create (default 100; 0 = no limit). */
  instanceQuota?: number;
}

export const DEFAULT_INSTANCE_QUOTA = 100;
/** The setting that lets webhook URLs reach private networks (named in the refusal). */
export const WEBHOOK_PRIVATE_NETWORKS_SETTING = 'WEBHOOK_ALLOW_PRIVATE_NETWORKS';

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): InstancesConfig => {
  return {
    ...natsSettingsFromEnv(env),
    grpcAddress: envString(env, 'INSTANCES_GRPC_ADDRESS', '127.0.0.1:50051'),
    opsHost: envString(env, 'OPS_HOST', '127.0.0.1'),
    opsPort: envPort(env, 'OPS_PORT', 9101),
    allowPrivateNetworks: envBool(env, WEBHOOK_PRIVATE_NETWORKS_SETTING, false),
    instanceQuota: envInt(env, 'INSTANCE_QUOTA', DEFAULT_INSTANCE_QUOTA),
  };
};
