import { execFile, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * The images the container tests run, all built on this machine (no image registry is reachable here, see
 * shared notes/docker.md). The base and NATS images are kept between runs (built once per tag); the app image is
 * rebuilt every run from the repo's own Dockerfile, which Docker's layer cache makes cheap while the dependencies
 * are unchanged.
 */
const run = promisify(execFile);
export const REPO_ROOT = resolve(__dirname, '../..');

/** Stands in for node:20-bookworm-slim; the tag carries the host's Node version, whose binary it copies. */
export const BASE_IMAGE = `wagw-test/node:${process.versions.node}-bookworm`;
/** Takes the official nats:2.12-alpine image's place in docker-compose.yml (NATS_IMAGE); tagged with the version of
 * the nats-server that scripts/ensure-nats-server.sh pins, so a new pin builds a new image. */
const natsImage = async (): Promise<string> => {
  const { stdout: bin } = await run('bash', ['scripts/ensure-nats-server.sh'], { cwd: REPO_ROOT });
  const { stdout: version } = await run(bin.trim(), ['--version']);
  return `wagw-test/nats:${/v?(\d+\.\d+\.\d+)/.exec(version)?.[1] ?? 'unknown'}`;
};
/** The project's Dockerfile built on BASE_IMAGE (WAGW_IMAGE in docker-compose.yml). */
export const APP_IMAGE = 'wagw-test/app:latest';
const APP_BUILD_STAGE = 'wagw-test/app-build:latest';

export const imageExists = (tag: string): boolean => spawnSync('docker', ['image', 'inspect', tag], { stdio: 'ignore', timeout: 30_000 }).status === 0;

const BIG_OUTPUT = 64 * 1024 * 1024;

const buildWith = async (script: 'base' | 'nats', tag: string): Promise<void> => {
  try {
    await run('bash', [resolve(__dirname, 'images.sh'), script, tag], { cwd: REPO_ROOT, maxBuffer: BIG_OUTPUT });
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`building ${tag} failed: ${e.stderr || e.message}`);
  }
};

const dockerBuild = async (args: string[]): Promise<void> => {
  try {
    await run('docker', ['build', '-q', '--build-arg', `BASE_IMAGE=${BASE_IMAGE}`, ...args, '.'], { cwd: REPO_ROOT, maxBuffer: BIG_OUTPUT });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`docker build of the app image failed: ${(e.stderr || '') + (e.stdout || '') || e.message}`);
  }
};

export interface BuiltImages {
  base: string;
  nats: string;
  app: string;
  /** Seconds each step took this run (0 = reused). */
  seconds: { base: number; nats: number; app: number };
}

const timed = async (step: () => Promise<void>): Promise<number> => {
  const started = Date.now();
  await step();
  return Math.round((Date.now() - started) / 100) / 10;
};

/** Builds what is missing; returns the tags and how long each build took. */
export const ensureImages = async (): Promise<BuiltImages> => {
  const base = imageExists(BASE_IMAGE) ? 0 : await timed(() => buildWith('base', BASE_IMAGE));
  const natsTag = await natsImage();
  const nats = imageExists(natsTag) ? 0 : await timed(() => buildWith('nats', natsTag));
  const app = await timed(async () => {
    // The build stage gets a tag too, so that it stays as the cache of the next run instead of lying around untagged.
    await dockerBuild(['--target', 'build', '-t', APP_BUILD_STAGE]);
    await dockerBuild(['-t', APP_IMAGE]);
  });
  // Earlier runs' app images and build stages, untagged now, would pile up run after run: remove those (only images
  // built on this test's base image carry its label).
  await run('docker', ['image', 'prune', '--force', '--filter', 'label=org.wagw.test-image=base']).catch(() => undefined);
  return { base: BASE_IMAGE, nats: natsTag, app: APP_IMAGE, seconds: { base, nats, app } };
};
