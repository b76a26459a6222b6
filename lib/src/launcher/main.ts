import { isIPv6 } from 'node:net';
import { join, resolve } from 'node:path';
import { issueToken } from '../auth';
import { envOptional } from '../config';
import { invalidArgument, isAppError } from '../errors';
import { redactUserinfo } from '../log';
import { EXIT_BAD_CONFIG, isBadConfig, mainLogger } from '../ops';
import { freeFixedPort, listenProblem, natsServerBinary, natsServerVersion, planLocalCluster } from '../nats';
import { Supervised } from './children';
import { loadJwtSecret, prepareDataDir } from './dataDir';
import { localReplicas, startWatchedCluster, WatchedNatsServer } from './localNats';
import { acquireLauncherLock, LauncherRunning } from './lock';
import { launcherSettings, type LauncherSettings, type ServicePorts } from './settings';

/**
 * One command for a whole gateway on one machine: a local nats-server under DATA_DIR (unless NATS_URL is set),
 * every service as its own process (they talk gRPC and NATS as in production), then the URL and a token.
 */
const ROOT = resolve(__dirname, '../../..');
const logger = mainLogger('launcher');

const waitForReady = async (url: string, timeoutMs: number): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
};

/**
 * A start that cannot go on: one plain line for the person who typed `npm start`, exit code 1, or 78 (EX_CONFIG) when
 * a setting is to blame.
 */
const refuse = (message: string, exitCode = 1): never => {
  process.stderr.write(`${message}\n`);
  process.exit(exitCode);
};

interface LocalNats {
  url: string;
  replicas: number;
  description: string;
  stop(): Promise<void>;
}

/**
 * The command that makes more tokens for this gateway, ready to paste: `--silent` (npm's own lines would end up in a
 * `$(...)` capture) and the DATA_DIR whose secret signs them (elsewhere the CLI finds none and says so).
 */
const moreTokens = (env: NodeJS.ProcessEnv, dataDir: string): string => {
  const where = envOptional(env, 'AUTH_JWT_SECRET') ? 'AUTH_JWT_SECRET=... ' : envOptional(env, 'DATA_DIR') ? `DATA_DIR=${dataDir} ` : '';
  return `${where}npm run --silent token -- --account NAME`;
};

/**
 * Unless NATS_URL is set: one nats-server with its store in DATA_DIR/nats, or with NATS_CLUSTER_SIZE=N (N >= 2) a
 * JetStream cluster of N nodes on loopback with their stores in DATA_DIR/nats-cluster/n1..nN, and every stream and
 * bucket replicated min(N, 3) times (NATS_REPLICAS overrides; refused when it does not fit, see localReplicas).
 * Each server is watched: restarted when it dies, ended when the launcher dies (WatchedNatsServer).
 */
const startLocalNats = async (env: NodeJS.ProcessEnv, settings: LauncherSettings): Promise<LocalNats | null> => {
  if (settings.natsUrl) return null;
  const { dataDir, clusterSize: size } = settings;
  const local = localReplicas(settings.replicas, size);
  if ('problem' in local) return refuse(local.problem, EXIT_BAD_CONFIG);
  const binary = natsServerBinary(env);
  const version = natsServerVersion(binary);
  if (version === null) {
    if (envOptional(env, 'NATS_SERVER_BIN'))
      throw invalidArgument('bad_config', `NATS_SERVER_BIN=${binary} does not run as nats-server: set it to a nats-server binary, or unset it`);
    throw invalidArgument('nats_server_missing', 'no nats-server: run scripts/ensure-nats-server.sh (npm start does), or set NATS_URL');
  }
  if (size <= 1) {
    const server = await WatchedNatsServer.start({ server: { storeDir: join(dataDir, 'nats'), port: settings.natsPort, binary }, logger });
    return { url: server.url, replicas: 1, description: `${server.url} (nats-server ${version}, store ${server.storeDir})`, stop: () => server.stop() };
  }
  const replicas = local.replicas;
  const cluster = await startWatchedCluster(await planLocalCluster({ size, baseDir: join(dataDir, 'nats-cluster'), binary }), logger);
  logger.info({ url: cluster.url, size, replicas, version }, 'started a local nats-server cluster');
  return {
    url: cluster.url,
    replicas,
    description: `${size}-node cluster, streams and buckets R${replicas} (nats-server ${version}): ${cluster.url}`,
    stop: () => cluster.stop(),
  };
};

/** A host as it goes into a URL: an IPv6 address in brackets (`http://[::1]:3000`). */
const urlHost = (host: string): string => (isIPv6(host) ? `[${host}]` : host);

/**
 * Nothing is started while PORT (or the local nats-server's NATS_PORT) cannot be listened on: the gateway would
 * crash-loop on it, and the readiness poll would be answered by whatever holds the port (another npm start, any web
 * server), printing a token for it; nats-server would fail to bind again and again while the services talked to the
 * other program. `instead`: what to do about it.
 */
const assertPortFree = async (variable: string, host: string, port: number, instead: { inUse: string; otherwise: string }): Promise<void> => {
  const problem = await listenProblem(port, host);
  if (problem === 'EADDRINUSE') refuse(`${variable} ${port} on ${host} is in use by another program: stop it, or ${instead.inUse}`);
  else if (problem !== null) refuse(`cannot listen on ${variable} ${port} on ${host} (${problem}): ${instead.otherwise}`);
};

/** A backend service under the launcher: its gRPC address (`<NAME>_GRPC_ADDRESS`) and ops port are what it was given. */
const backend = (name: string, ports: ServicePorts, env: NodeJS.ProcessEnv, onBadConfig: (line: string) => void): Supervised =>
  new Supervised(
    name,
    join(ROOT, `services/${name}/dist/main.js`),
    { ...env, [`${name.toUpperCase()}_GRPC_ADDRESS`]: `127.0.0.1:${ports.grpc}`, OPS_PORT: String(ports.ops) },
    logger,
    { onBadConfig },
  );

/** Ports left 0 (a free one) picked now; see the comment where they are used. */
const pickPorts = async (ports: ServicePorts): Promise<ServicePorts> => ({
  grpc: ports.grpc || (await freeFixedPort()),
  ops: ports.ops || (await freeFixedPort()),
});

const main = async (): Promise<void> => {
  const env = process.env;
  const settings = launcherSettings(env);
  const { dataDir, host } = settings;
  prepareDataDir(dataDir);
  try {
    acquireLauncherLock(dataDir);
  } catch (error) {
    if (error instanceof LauncherRunning) refuse(error.message);
    throw error;
  }
  // PORT=0 (any free port) is picked here: the readiness poll and the banner need the port the gateway listens on.
  const port = settings.port || (await freeFixedPort(host));
  await assertPortFree('PORT', host, port, { inUse: 'start with PORT=<a free port>', otherwise: 'start with another PORT or HOST' });
  if (settings.natsPort !== 0 && !settings.natsUrl && settings.clusterSize <= 1) {
    const instead = 'leave NATS_PORT unset (a free port)';
    await assertPortFree('NATS_PORT', '127.0.0.1', settings.natsPort, { inUse: instead, otherwise: instead });
  }
  const jwtSecret = loadJwtSecret(dataDir, env);
  const local = await startLocalNats(env, settings);
  const natsUrl = local ? local.url : (settings.natsUrl ?? '');
  // Below the OS's ephemeral range (freeFixedPort): a service restarted by the launcher binds the same port again, and
  // a port 0 handed out meanwhile to any other process (a test running beside it did) would make it fail for good.
  const instances = await pickPorts(settings.instances);
  const webhooks = await pickPorts(settings.webhooks);
  const sessions = await pickPorts(settings.sessions);
  // EXIT_WITH_PARENT: a service stops by itself when the launcher is gone (even SIGKILLed), so none is orphaned.
  const common = { ...env, NATS_URL: natsUrl, ...(local ? { NATS_REPLICAS: String(local.replicas) } : {}), AUTH_JWT_SECRET: jwtSecret, EXIT_WITH_PARENT: '1' };
  // A service that refuses a setting would refuse it again at every restart: everything stops, and its line is shown.
  const badConfig = (line: string): void => void stop(EXIT_BAD_CONFIG, line);
  const services = [
    backend('instances', instances, common, badConfig),
    backend('webhooks', webhooks, common, badConfig),
    backend('sessions', sessions, common, badConfig),
    new Supervised(
      'gateway',
      join(ROOT, 'services/gateway/dist/main.js'),
      {
        ...common,
        HOST: host,
        PORT: String(port),
        INSTANCES_ADDRESS: `127.0.0.1:${instances.grpc}`,
        WEBHOOKS_ADDRESS: `127.0.0.1:${webhooks.grpc}`,
        SESSIONS_ADDRESS: `127.0.0.1:${sessions.grpc}`,
      },
      logger,
      { onBadConfig: badConfig },
    ),
  ];

  let stopping = false;
  /** Stops every service, then nats-server; `why`, a line for whoever ran npm start, comes just before the last one. */
  const stop = async (exitCode = 0, why?: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping');
    // The gateway first (no new requests), then the others together: each gets its own grace period, not a share.
    const [gateway, ...backends] = [...services].reverse();
    await gateway?.stop();
    await Promise.all(backends.map((service) => service.stop()));
    await local?.stop();
    if (why) process.stderr.write(`${why}\n`);
    // The services' last lines are theirs ("shutting down"): this one, like the banner, tells whoever ran npm start
    // that everything has stopped.
    process.stdout.write(`  Stopped: every service and nats-server${exitCode === 0 ? '' : ` (exit code ${exitCode})`}.\n`);
    process.exit(exitCode);
  };
  // The children are in process groups of their own (Supervised, WatchedNatsServer): only these signals stop them, in
  // order. SIGHUP (the terminal closed) no longer reaches them, so it stops everything as Ctrl-C does.
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  process.on('SIGHUP', () => void stop());
  for (const service of services) service.start();

  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const base = `http://${urlHost(shownHost)}:${port}`;
  if (!(await waitForReady(`${base}/readyz`, 60_000))) {
    // A start that did not work is a failure for whoever ran it (a script, a service manager), not a clean stop.
    logger.error('the gateway did not become ready within 60 s');
    await stop(1);
    return;
  }
  const token = issueToken(jwtSecret, 'default', 30 * 86_400);
  process.stdout.write(
    [
      '',
      `  Gateway ready:  ${base}/v1`,
      `  API docs:       ${base}/v1/docs`,
      `  Console:        ${base}/console/  (sign in with the token below)`,
      `  NATS:           ${local ? local.description : `${redactUserinfo(natsUrl)} (NATS_URL)`}`,
      env.WA_CONNECTOR === 'sandbox'
        ? '  Connector:      sandbox (a simulated platform: link with /v1/sandbox/scan, no phone needed)'
        : '  Connector:      baileys (WhatsApp; scan get_qrcode with the phone). Without a phone: WA_CONNECTOR=sandbox npm start',
      `  Token (account "default", valid 30 days):`,
      `  ${token}`,
      '',
      '  Try it:',
      `    export TOKEN=${token}`,
      `    curl -H "Authorization: Bearer $TOKEN" ${base}/v1/create_instance`,
      `  More tokens: ${moreTokens(env, dataDir)}.  Stop: Ctrl-C.`,
      '',
    ].join('\n'),
  );
};

main().catch((error: unknown) => {
  // A bad setting (or a missing nats-server) is the operator's to fix, and its message says how: that line alone, as
  // the services print theirs. Anything else is a crash, whose stack is worth having.
  if (isAppError(error) && error.kind === 'invalid_argument') refuse(error.message, isBadConfig(error) ? EXIT_BAD_CONFIG : 1);
  logger.fatal({ err: error }, 'launcher failed');
  process.exit(1);
});
