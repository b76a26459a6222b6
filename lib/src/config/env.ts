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
