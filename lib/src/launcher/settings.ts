import { envInt, envNatsUrl, envOptional, envPort, envString } from '../config';
import { resolveDataDir } from './dataDir';

/** Ports of one backend service; 0: a free one, picked when it is started. */
export interface ServicePorts {
  grpc: number;
  ops: number;
}

/**
 * The launcher's own variables, every one read before anything starts: a bad one stops it with one line naming it and
 * nothing left running (read later, one stopped it with a nats-server already started).
 */
export interface LauncherSettings {
  dataDir: string;
  host: string;
  port: number;
  /** `NATS_URL`: the services' NATS; unset, the launcher starts its own. */
  natsUrl: string | undefined;
  /** The single local nats-server's port (0: a free one). */
  natsPort: number;
  /** `NATS_CLUSTER_SIZE`: 2 or more starts a local cluster instead of one server. */
  clusterSize: number;
  /** `NATS_REPLICAS` as set (held against the local NATS by localReplicas), undefined when unset. */
  replicas: number | undefined;
  instances: ServicePorts;
  webhooks: ServicePorts;
  sessions: ServicePorts;
}

export const launcherSettings = (env: NodeJS.ProcessEnv): LauncherSettings => ({
  dataDir: resolveDataDir(env),
  host: envString(env, 'HOST', '127.0.0.1'),
  port: envPort(env, 'PORT', 3000),
  natsUrl: envNatsUrl(env),
  natsPort: envPort(env, 'NATS_PORT', 0),
  // At most 5: JetStream keeps at most 5 replicas, and every local node is a process on this machine.
  clusterSize: envInt(env, 'NATS_CLUSTER_SIZE', 1, { min: 0, max: 5 }),
  replicas: envOptional(env, 'NATS_REPLICAS') === undefined ? undefined : envInt(env, 'NATS_REPLICAS', 1),
  instances: { grpc: envPort(env, 'INSTANCES_GRPC_PORT', 0), ops: envPort(env, 'INSTANCES_OPS_PORT', 0) },
  webhooks: { grpc: envPort(env, 'WEBHOOKS_GRPC_PORT', 0), ops: envPort(env, 'WEBHOOKS_OPS_PORT', 0) },
  sessions: { grpc: envPort(env, 'SESSIONS_GRPC_PORT', 0), ops: envPort(env, 'SESSIONS_OPS_PORT', 0) },
});
