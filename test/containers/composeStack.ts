import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from 'testcontainers';
import { freeFixedPort, issueToken } from '@wagw/lib';
import { REPO_ROOT, type BuiltImages } from './images';

/**
 * The repo's docker-compose.yml plus the test override (docker-compose.drill.yml), up under a project name of its
 * own, driven by testcontainers through Debian's docker-compose v1 (`executable: { standalone: true }`).
 */
const run = promisify(execFile);
export const COMPOSE_FILES = ['docker-compose.yml', 'test/containers/docker-compose.drill.yml'];
export const NATS_SERVICES = ['nats-1', 'nats-2', 'nats-3'];
export const APP_SERVICES = ['instances-1', 'instances-2', 'sessions-1', 'sessions-2', 'webhooks-1', 'webhooks-2', 'gateway'];

export interface ComposeStack {
  readonly project: string;
  readonly gatewayUrl: string;
  readonly receiverUrl: string;
  /** Every NATS node's client URL as the test reaches it (fixed host ports, so a restarted node keeps its URL). */
  readonly natsUrl: string;
  token(account?: string): string;
  /** The container of a compose service (compose v1 and v2 name containers differently: found by labels). */
  container(service: string): Promise<string>;
  /** docker inspect's health status of a service's container: healthy, unhealthy, starting, or its state. */
  health(service: string): Promise<string>;
  /** Writes every container's log to `file` (for a failed run's post-mortem: the containers are gone after down). */
  saveLogs(file: string): Promise<void>;
  down(): Promise<void>;
}

export const docker = async (...args: string[]): Promise<string> => (await run('docker', args, { maxBuffer: 16 * 1024 * 1024 })).stdout.trim();

/** Brings the stack up; resolves once every container reports healthy. Removes whatever it made if that fails. */
export const startComposeStack = async (images: BuiltImages): Promise<ComposeStack> => {
  const project = `wagwtest${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const secret = randomBytes(32).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'wagw-compose-'));
  const envFile = join(dir, 'stack.env');
  // The services' env file (docker-compose.yml: env_file), as an operator's .env would be.
  writeFileSync(envFile, `AUTH_JWT_SECRET=${secret}\nWA_CONNECTOR=sandbox\nLOG_LEVEL=info\n`, { mode: 0o600 });
  // Below the ephemeral range, so that no outgoing connection takes a killed node's port before its restart.
  const natsPorts = [await freeFixedPort(), await freeFixedPort(), await freeFixedPort()];
  const environment = {
    COMPOSE_PROJECT_NAME: project,
    WAGW_ENV_FILE: envFile,
    WAGW_IMAGE: images.app,
    BASE_IMAGE: images.base,
    NATS_IMAGE: images.nats,
    GATEWAY_PUBLISH: '127.0.0.1:', // a free host port, on loopback only
    DRILL_NATS_1_PUBLISH: `127.0.0.1:${natsPorts[0]}`,
    DRILL_NATS_2_PUBLISH: `127.0.0.1:${natsPorts[1]}`,
    DRILL_NATS_3_PUBLISH: `127.0.0.1:${natsPorts[2]}`,
  };
  const composeEnv = { ...process.env, ...environment };
  const compose = (...args: string[]) =>
    run('docker-compose', ['-p', project, ...COMPOSE_FILES.flatMap((f) => ['-f', f]), ...args], {
      cwd: REPO_ROOT,
      env: composeEnv,
      maxBuffer: 256 * 1024 * 1024,
    });
  const removeAll = async (): Promise<void> => {
    // Also what a failed `up` left: containers, the project network and the named volumes.
    await compose('down', '--volumes', '--remove-orphans', '--timeout', '0').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };

  let started: StartedDockerComposeEnvironment;
  try {
    started = await new DockerComposeEnvironment(REPO_ROOT, COMPOSE_FILES)
      .withProjectName(project)
      .withEnvironment(environment)
      .withClientOptions({ executable: { standalone: true } })
      .withDefaultWaitStrategy(Wait.forHealthCheck())
      .withStartupTimeout(180_000)
      .up();
  } catch (error) {
    await removeAll();
    throw error;
  }

  const container = async (service: string): Promise<string> => {
    const names = await docker(
      'ps',
      '-a',
      '--filter',
      `label=com.docker.compose.project=${project}`,
      '--filter',
      `label=com.docker.compose.service=${service}`,
      '--format',
      '{{.Names}}',
    );
    const name = names.split('\n').filter(Boolean)[0];
    if (!name) throw new Error(`no container for service ${service} in ${project}`);
    return name;
  };
  const mapped = async (service: string, port: number): Promise<number> => {
    const line = await docker('port', await container(service), String(port));
    return Number(/127\.0\.0\.1:(\d+)/.exec(line)?.[1]);
  };
  const gatewayUrl = `http://127.0.0.1:${await mapped('gateway', 3000)}`;
  const receiverUrl = `http://127.0.0.1:${await mapped('receiver', 8080)}`;
  return {
    project,
    gatewayUrl,
    receiverUrl,
    natsUrl: natsPorts.map((p) => `nats://127.0.0.1:${p}`).join(','),
    token: (account = 'drill') => issueToken(secret, account, 3600),
    container,
    health: async (service) =>
      docker('inspect', '--format', '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}', await container(service)),
    saveLogs: async (file) => {
      const { stdout } = await compose('logs', '--no-color', '--timestamps').catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
      writeFileSync(file, stdout);
    },
    down: async () => {
      await started.down({ removeVolumes: true }).catch(() => undefined);
      await removeAll();
    },
  };
};
