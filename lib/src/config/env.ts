import { invalidArgument } from '../errors';

type Env = Record<string, string | undefined>;

/** Reads a string variable, falling back to a default when unset or empty. */
export const envString = (env: Env, name: string, fallback: string): string => {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
};

export const envOptional = (env: Env, name: string): string | undefined => {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
};

/** Reads a non-negative integer; a malformed value stops start-up with a clear message. */
export const envInt = (env: Env, name: string, fallback: number): number => {
  const raw = envOptional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw invalidArgument('bad_config', `${name} must be a non-negative integer, got "${raw}"`);
  return Number(raw);
};

export const envBool = (env: Env, name: string, fallback: boolean): boolean => {
  const raw = envOptional(env, name);
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw invalidArgument('bad_config', `${name} must be true or false, got "${raw}"`);
};

/** Where a service finds NATS and how many copies its streams and buckets keep. */
export interface NatsSettings {
  /** `NATS_URL`: one server or a comma-separated list (every node of a cluster). */
  natsUrl: string;
  /** `NATS_REPLICAS` (default 1): replicas of every stream and KV bucket; 3 on a 3-node cluster. */
  natsReplicas?: number;
  /** `CHECKPOINT_EVERY_MS` (default 60,000): how often a read model writes its checkpoint while the log moves. */
  checkpointEveryMs?: number;
}

export const DEFAULT_CHECKPOINT_EVERY_MS = 60_000;

/** `NATS_URL` (required: the launcher sets it when it starts nats-server itself) and `NATS_REPLICAS`. */
export const natsSettingsFromEnv = (env: Env): Required<NatsSettings> => {
  const natsUrl = envOptional(env, 'NATS_URL');
  if (!natsUrl) throw new Error('NATS_URL is required (the launcher sets it when it starts nats-server itself)');
  // The range (1-5) and what the server can hold are checked where the connection is made (connectNats).
  return { natsUrl, natsReplicas: envInt(env, 'NATS_REPLICAS', 1), checkpointEveryMs: envInt(env, 'CHECKPOINT_EVERY_MS', DEFAULT_CHECKPOINT_EVERY_MS) };
};
