import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { envOptional } from '../config';

/** `DATA_DIR`, default `.data` in the working directory: the local nats-server store and the generated JWT secret. */
export const resolveDataDir = (env: NodeJS.ProcessEnv = process.env): string => resolve(envOptional(env, 'DATA_DIR') ?? '.data');

/**
 * `AUTH_JWT_SECRET` when set; otherwise a secret generated once and kept in `DATA_DIR/jwt-secret` (mode 0600),
 * so tokens stay valid across restarts of the quickstart.
 */
export const loadJwtSecret = (dataDir: string, env: NodeJS.ProcessEnv = process.env): string => {
  const fromEnv = envOptional(env, 'AUTH_JWT_SECRET');
  if (fromEnv) return fromEnv;
  const file = join(dataDir, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
};
