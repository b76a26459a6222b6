import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { envOptional } from '../config';
import { invalidArgument } from '../errors';

/** `DATA_DIR`, default `.data` in the working directory: the local nats-server store and the generated JWT secret. */
export const resolveDataDir = (env: NodeJS.ProcessEnv = process.env): string => resolve(envOptional(env, 'DATA_DIR') ?? '.data');

/**
 * Creates DATA_DIR (and its parents) if needed. One that cannot be (a regular file there, no permission) is a bad
 * setting named as such, not mkdir's "EEXIST: file already exists" with a stack.
 */
export const prepareDataDir = (dataDir: string): void => {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'is not a directory' : `cannot be created (${code ?? String(error)})`;
    throw invalidArgument('bad_config', `DATA_DIR ${dataDir} ${why}: set DATA_DIR to a directory of yours`);
  }
};

/**
 * `AUTH_JWT_SECRET` when set; otherwise a secret generated once and kept in `DATA_DIR/jwt-secret` (mode 0600),
 * so tokens stay valid across restarts of the quickstart.
 */
export const loadJwtSecret = (dataDir: string, env: NodeJS.ProcessEnv = process.env): string => {
  const existing = existingJwtSecret(dataDir, env);
  if (existing !== null) return existing;
  const file = join(dataDir, 'jwt-secret');
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
};

/**
 * The secret a gateway of `dataDir` signs with (`AUTH_JWT_SECRET`, else `DATA_DIR/jwt-secret`), or null when there is
 * none yet: the token CLI must not make one of its own, whose tokens no gateway would take.
 */
export const existingJwtSecret = (dataDir: string, env: NodeJS.ProcessEnv = process.env): string | null => {
  const fromEnv = envOptional(env, 'AUTH_JWT_SECRET');
  if (fromEnv) return fromEnv;
  const file = join(dataDir, 'jwt-secret');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : null;
};
