import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { Logger } from '../log';
import { unavailable } from '../errors';
import { assertSupportedServer } from './serverVersion';

/** One NATS connection with its JetStream and KV handles, and whether it is currently connected. */
export interface NatsHandle {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly kvm: Kvm;
  readonly serverVersion: string;
  /** JetStream API and publish time-out (ms). */
  readonly timeoutMs: number;
  isConnected(): boolean;
  /** Throws an `unavailable` AppError at once while the connection is down, instead of waiting for a timeout. */
  ensureConnected(): void;
  close(): Promise<void>;
}

export interface ConnectOptions {
  url: string;
  name: string;
  logger: Logger;
  /** JetStream API and publish time-out; a request that takes longer fails as unavailable. */
  timeoutMs?: number;
}

/**
 * Connects (waiting for the server on first connect, reconnecting forever after), checks the server version, and
 * tracks the connection state so callers can fail fast with a 503 while NATS is unreachable.
 */
export const connectNats = async ({ url, name, logger, timeoutMs = 5_000 }: ConnectOptions): Promise<NatsHandle> => {
  const nc = await connect({
    servers: url,
    name,
    waitOnFirstConnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    pingInterval: 5_000,
    maxPingOut: 2,
    // Without this the client builds two Error objects (stack traces) for every request and publish ack, in
    // case it times out: ~11 % of the webhooks service's CPU under load. Our own errors carry the context.
    noAsyncTraces: true,
  });
  const serverVersion = nc.info?.version ?? 'unknown';
  assertSupportedServer(serverVersion);
  let connected = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        connected = false;
        logger.warn({ server: status.server }, 'nats disconnected');
      } else if (status.type === 'reconnect') {
        connected = true;
        logger.info({ server: status.server }, 'nats reconnected');
      }
    }
  })();
  const js = jetstream(nc, { timeout: timeoutMs });
  const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
  logger.info({ serverVersion }, 'connected to nats');
  return {
    nc,
    js,
    jsm,
    kvm: new Kvm(js),
    serverVersion,
    timeoutMs,
    isConnected: () => connected && !nc.isClosed(),
    ensureConnected: () => {
      if (!connected || nc.isClosed()) throw unavailable('event_store_unavailable', 'The event store (NATS) is unreachable');
    },
    close: async () => {
      if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
    },
  };
};
