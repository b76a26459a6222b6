import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { redactUserinfo, type Logger } from '../log';
import { invalidArgument, unavailable } from '../errors';
import { assertSupportedServer } from './serverVersion';
import { untilJetStreamAnswers } from './startupRetry';

/** One NATS connection with its JetStream and KV handles, and whether it is currently connected. */
export interface NatsHandle {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly kvm: Kvm;
  readonly serverVersion: string;
  /** Replicas of every stream and KV bucket the project creates (`NATS_REPLICAS`). */
  readonly replicas: number;
  /** JetStream API and publish time-out (ms). */
  readonly timeoutMs: number;
  /** How long a stream or bucket that cannot be placed on `replicas` servers is retried before it is a configuration error. */
  readonly placementGraceMs: number;
  /** `ConnectOptions.giveUpAfterMs`: every start-up step on this connection (streams, buckets) gives up after it too. */
  readonly giveUpAfterMs: number | undefined;
  readonly logger: Logger;
  isConnected(): boolean;
  /** Throws an `unavailable` AppError at once while the connection is down, instead of waiting for a timeout. */
  ensureConnected(): void;
  /** Calls `listener` each time the connection drops; returns the unsubscribe. */
  onDisconnect(listener: () => void): () => void;
  /**
   * Runs a request: fails at once while disconnected, and as soon as the connection drops while it waits (its reply
   * can no longer come: without this it would wait out its whole time-out).
   */
  whileConnected<T>(operation: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** One server or a comma-separated list (every node of a cluster). */
  url: string;
  name: string;
  logger: Logger;
  /** JetStream API and publish time-out; a request that takes longer fails as unavailable. */
  timeoutMs?: number;
  /** `NATS_REPLICAS`: 1 on one server, 3 on a 3-node cluster (default 1). */
  replicas?: number;
  /** Default 15 s: long enough for the nodes of a cluster that starts together to join. */
  placementGraceMs?: number;
  /**
   * A command-line tool's patience: no server answering (or JetStream not answering) for this long fails with one
   * message naming the URL. Absent, a service waits for ever (not ready), as it should while NATS starts or is away.
   */
  giveUpAfterMs?: number;
}

/** JetStream keeps at most 5 replicas of a stream. */
export const MAX_REPLICAS = 5;
/** While NATS cannot be reached at start-up, one warning per this interval (not one per attempt). */
const UNREACHABLE_LOG_EVERY_MS = 10_000;

/** Splits `NATS_URL` (`nats://a:4222,nats://b:4222`) into its servers; an empty list is a configuration error. */
export const parseNatsServers = (url: string): string[] => {
  const servers = url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (servers.length === 0) throw invalidArgument('bad_config', 'NATS_URL must name at least one server');
  return servers;
};

/** The servers as logs and messages show them: a NATS_URL may hold a user and password, or a token (nats://TOKEN@host). */
const shownServers = (servers: string[]): string => servers.map(redactUserinfo).join(',');

const assertReplicas = (replicas: number): void => {
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS) {
    throw invalidArgument('bad_config', `NATS_REPLICAS must be a whole number from 1 to ${MAX_REPLICAS}, got ${String(replicas)}`);
  }
};

/** The client's default time-out of one connect (for a server that accepts TCP but says nothing). */
const CONNECT_TIMEOUT_MS = 20_000;
const RETRY_MS = 1_000;

/**
 * Connects, retrying (with a warning per interval, not per attempt) while no server answers; with `giveUpAfterMs`,
 * only that long, then fails with a message for the person at the terminal (the warnings would only repeat it).
 */
const connectWhenReachable = async (servers: string[], name: string, logger: Logger, giveUpAfterMs?: number): Promise<NatsConnection> => {
  let lastWarning = 0;
  const deadline = giveUpAfterMs === undefined ? Infinity : Date.now() + giveUpAfterMs;
  for (;;) {
    try {
      return await connect({
        servers,
        name,
        // A server that accepts TCP but says nothing must not hold a tool past its patience.
        ...(giveUpAfterMs === undefined ? {} : { timeout: Math.max(250, Math.min(CONNECT_TIMEOUT_MS, deadline - Date.now())) }),
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        pingInterval: 5_000,
        maxPingOut: 2,
        // Without this the client builds two Error objects (stack traces) for every request and publish ack, in
        // case it times out: ~11 % of the webhooks service's CPU under load. Our own errors carry the context.
        noAsyncTraces: true,
      });
    } catch (error) {
      if (giveUpAfterMs !== undefined) {
        if (Date.now() >= deadline) {
          const reason = error instanceof Error ? error.message : String(error);
          throw unavailable('nats_unreachable', `NATS at ${shownServers(servers)} did not answer (${reason}): is NATS_URL right?`);
        }
      } else if (Date.now() - lastWarning >= UNREACHABLE_LOG_EVERY_MS) {
        lastWarning = Date.now();
        logger.warn({ err: error, servers: servers.map(redactUserinfo) }, 'NATS is unreachable; retrying (not ready)');
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(RETRY_MS, deadline - Date.now()))));
    }
  }
};

/**
 * Connects (waiting while no server answers, reconnecting forever after, to any server of the list), checks that the
 * server can keep `replicas` copies, waits until JetStream answers (a cluster electing its leader at start-up), and
 * tracks the connection state so callers fail fast with a 503 while NATS is unreachable.
 */
export const connectNats = async ({
  url,
  name,
  logger,
  timeoutMs = 5_000,
  replicas = 1,
  placementGraceMs = 15_000,
  giveUpAfterMs,
}: ConnectOptions): Promise<NatsHandle> => {
  assertReplicas(replicas);
  const servers = parseNatsServers(url);
  const nc = await connectWhenReachable(servers, name, logger, giveUpAfterMs);
  const serverVersion = nc.info?.version ?? 'unknown';
  try {
    assertSupportedServer(serverVersion, replicas, nc.info?.cluster);
  } catch (error) {
    await nc.close();
    throw error;
  }
  let connected = true;
  const dropListeners = new Set<() => void>();
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        connected = false;
        logger.warn({ server: status.server }, 'nats disconnected');
        for (const listener of [...dropListeners]) listener();
      } else if (status.type === 'reconnect') {
        connected = true;
        logger.info({ server: status.server }, 'nats reconnected');
      }
    }
  })();
  const js = jetstream(nc, { timeout: timeoutMs });
  const ensureConnected = (): void => {
    if (!connected || nc.isClosed()) throw unavailable('event_store_unavailable', 'The event store (NATS) is unreachable');
  };
  const onDisconnect = (listener: () => void): (() => void) => {
    dropListeners.add(listener);
    return () => dropListeners.delete(listener);
  };
  // The JetStream manager asks for the account's info: it fails until the cluster has a meta leader.
  let jsm: JetStreamManager;
  try {
    jsm = await untilJetStreamAnswers(logger, `JetStream at ${shownServers(servers)}`, () => jetstreamManager(nc, { timeout: timeoutMs }), giveUpAfterMs);
  } catch (error) {
    await nc.close();
    throw error;
  }
  logger.info({ serverVersion, servers: servers.length, replicas, cluster: nc.info?.cluster ?? null }, 'connected to nats');
  return {
    nc,
    js,
    jsm,
    kvm: new Kvm(js),
    serverVersion,
    replicas,
    timeoutMs,
    placementGraceMs,
    giveUpAfterMs,
    logger,
    isConnected: () => connected && !nc.isClosed(),
    ensureConnected,
    onDisconnect,
    whileConnected: <T>(operation: () => Promise<T>): Promise<T> => {
      ensureConnected();
      return new Promise<T>((resolve, reject) => {
        const off = onDisconnect(() => reject(unavailable('event_store_unavailable', 'The connection to NATS dropped while a request was waiting')));
        operation().then(resolve, reject).finally(off);
      });
    },
    close: async () => {
      if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
    },
  };
};
