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

/** Inclusive bounds of a numeric variable. */
export interface EnvRange {
  min?: number;
  max?: number;
}

const describeRange = (min: number, max: number): string => {
  if (max === Number.MAX_SAFE_INTEGER) return min === 0 ? 'a non-negative integer' : `an integer of at least ${min}`;
  return `an integer from ${min} to ${max}`;
};

/**
 * Reads an integer (non-negative unless `range.min` says more); a malformed or out-of-range value stops start-up with
 * one message naming the variable. Unset or empty: the fallback, unchecked (the defaults are ours).
 */
export const envInt = (env: Env, name: string, fallback: number, range: EnvRange = {}): number => {
  const raw = envOptional(env, name);
  if (raw === undefined) return fallback;
  const { min = 0, max = Number.MAX_SAFE_INTEGER } = range;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  // NaN fails both comparisons: one message for malformed and out-of-range values.
  if (!(value >= min && value <= max)) throw invalidArgument('bad_config', `${name} must be ${describeRange(min, max)}, got "${raw}"`);
  return value;
};

/**
 * The longest delay setTimeout/setInterval keep (2^31-1 ms, about 24.8 days): a longer one fires at once (Node warns
 * TimeoutOverflowWarning and uses 1 ms), so a duration above it would do the opposite of what was asked.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Reads a duration in milliseconds, at most MAX_TIMER_MS. `min` defaults to 0: a variable where 0 means nothing
 * sane (a timer that would spin, a wait that could never succeed) passes `{ min: 1 }`.
 */
export const envMs = (env: Env, name: string, fallback: number, range: { min?: number } = {}): number =>
  envInt(env, name, fallback, { min: range.min ?? 0, max: MAX_TIMER_MS });

/** Reads a TCP port, 0-65535 (0 = any free port, as the OS picks it). */
export const envPort = (env: Env, name: string, fallback: number): number => envInt(env, name, fallback, { min: 0, max: 65_535 });

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

/** The schemes a NATS client connects with; a server named without one (`host:4222`) is `nats://`. */
const NATS_SCHEMES = ['nats:', 'tls:'];

/**
 * `NATS_URL` as the NATS client takes it, one server or several comma-separated (every node of a cluster), each with
 * a host; anything else is a configuration error at start-up, not a "NATS is unreachable" retried for ever.
 */
export const envNatsUrl = (env: Env): string | undefined => {
  const raw = envOptional(env, 'NATS_URL');
  if (raw === undefined) return undefined;
  for (const server of raw.split(',').map((s) => s.trim())) {
    let url: URL | null = null;
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `nats://${server}`);
    } catch {
      url = null;
    }
    if (!url || !NATS_SCHEMES.includes(url.protocol) || url.hostname === '') {
      throw invalidArgument(
        'bad_config',
        `NATS_URL: "${server}" is not a NATS server URL (e.g. nats://127.0.0.1:4222, tls://nats.example:4222; several comma-separated)`,
      );
    }
  }
  return raw;
};

/** `NATS_URL` (required: the launcher sets it when it starts nats-server itself) and `NATS_REPLICAS`. */
export const natsSettingsFromEnv = (env: Env): Required<NatsSettings> => {
  const natsUrl = envNatsUrl(env);
  if (!natsUrl) throw invalidArgument('bad_config', 'NATS_URL is required (the launcher sets it when it starts nats-server itself)');
  // The range (1-5) and what the server can hold are checked where the connection is made (connectNats).
  return {
    natsUrl,
    natsReplicas: envInt(env, 'NATS_REPLICAS', 1),
    // A checkpoint timer of 0 would fire every millisecond: at least 1.
    checkpointEveryMs: envMs(env, 'CHECKPOINT_EVERY_MS', DEFAULT_CHECKPOINT_EVERY_MS, { min: 1 }),
  };
};
