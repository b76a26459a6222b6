import {
  caughtUpReadiness,
  assertPublicUrl,
  BUCKETS,
  createLogger,
  LeaseStore,
  loadSessionsProto,
  Ownership,
  CheckpointedProjection,
  startGrpcServer,
  type Logger,
  CheckpointStore,
  DEFAULT_CHECKPOINT_EVERY_MS,
  startServiceBase,
  STREAMS,
  type RunningService,
} from '@wagw/lib';
import { MessagesService } from './application/messagesService';
import { MEDIA_PRIVATE_NETWORKS_SETTING, type SessionsConfig } from './config';
import { BaileysConnector } from './connector/baileys';
import type { Connector } from './connector/port';
import { KvSandboxLedger, SandboxPlatform } from './connector/sandbox';
import { Dispatcher } from './dispatch/dispatcher';
import { UnheldSendsDecider } from './dispatch/unheldSends';
import { sessionsHandlers } from './grpc/sessionsHandlers';
import { DownloadSlots } from './inbound/downloadSlots';
import { downloadInboundMedia } from './inbound/inboundOps';
import { InboundRefStore } from './inbound/inboundRefs';
import { createMediaFetcher } from './media/mediaFetcher';
import { localOwnerOps } from './ownership/localOwnerOps';
import { OwnerRouter } from './ownership/ownerRouter';
import { InstanceRegistry } from './registry/instanceRegistry';
import { SendLedger } from './registry/sendLedger';
import { SessionManager } from './session/sessionManager';
import { FactWriter } from './session/factWriter';
import { NumberCheckThrottle } from './session/numberCheckThrottle';

export interface RunningSessionsService extends RunningService {
  /** The simulated platform when the connector is `sandbox` (for tests and the sandbox routes), else null. */
  sandbox: SandboxPlatform | null;
}

/** The durable consumer sessions sent from before the send ledger did (deleted at start-up). */
export const RETIRED_DISPATCH_DURABLE = 'sessions-dispatch';

/** Starts the sessions service: connector, sessions, dispatcher, gRPC and ops endpoints. */
export const startSessionsService = async (config: SessionsConfig, logger: Logger = createLogger('sessions')): Promise<RunningSessionsService> => {
  const base = 'the event store, buckets and read models';
  const { ops, service, closeBase } = await startServiceBase('sessions', config, logger, base, async ({ startup, nats, events }) => {
    let sandbox: SandboxPlatform | null = null;
    let connector: Connector;
    if (config.connector === 'sandbox') {
      logger.warn('WA_CONNECTOR=sandbox: instances link to a simulated platform, not to WhatsApp');
      connector = sandbox = new SandboxPlatform({ ...config.sandbox, ledger: await KvSandboxLedger.open(nats) });
    } else {
      connector = await BaileysConnector.open(nats, logger, config.baileys);
    }
    const registry = new InstanceRegistry(events, logger);
    const refs = await InboundRefStore.open(nats);
    // Stored times (NATS's) and event times (the appending service's) come from two clocks: a margin keeps a ref stored
    // a moment before an erasure from escaping it, at the price of the odd ref received just after.
    const CLOCK_MARGIN_MS = 5_000;
    const forgetRefs = (instanceId: string, at: number): void =>
      void refs
        .forgetInstance(instanceId, at + CLOCK_MARGIN_MS)
        .catch((error: unknown) => logger.warn({ err: error, instanceId }, 'could not drop the refs of received messages'));
    // Erasure reaches what is kept outside the log (Baileys' sent messages for re-sends, the refs that fetch received
    // media); every replica does it (idempotent), so it happens even while no replica holds the instance, and an
    // erasure replayed at start-up (made while no replica ran) happens too: each reaches only what was stored before it.
    registry.onErased((instanceId, at) => {
      void connector
        .forgetContent(instanceId, at + CLOCK_MARGIN_MS)
        .catch((error: unknown) => logger.warn({ err: error, instanceId }, 'could not drop the sent content of an erased instance'));
      forgetRefs(instanceId, at);
    });
    registry.onReset(forgetRefs);
    const checkpoints = await CheckpointStore.open(nats);
    await registry.startFromCheckpoint(checkpoints, config.checkpointEveryMs ?? DEFAULT_CHECKPOINT_EVERY_MS);
    await registry.catchUp(10_000);
    const ownership = new Ownership(
      await LeaseStore.open(nats, BUCKETS.sessionLeases),
      { replicaId: config.replicaId, ttlMs: config.leaseTtlMs, renewEveryMs: config.leaseRenewMs },
      logger,
    );
    await ownership.start();
    const sessions = new SessionManager(connector, new FactWriter(events, refs, logger), registry, ownership, logger, {
      autoMarkRead: config.autoMarkRead,
      restrictedPauseMs: config.restrictedPauseMs,
    });
    const media = createMediaFetcher({ maxBytes: config.mediaMaxBytes, timeoutMs: config.mediaTimeoutMs, allowPrivateNetworks: config.allowPrivateNetworks });
    // Older releases sent from this durable; this one sends from the send ledger and reads it no more. A replica of an
    // older release still running makes it again, and the next start deletes it again.
    await nats.jsm.consumers.delete(STREAMS.events.name, RETIRED_DISPATCH_DURABLE).catch(() => false);
    // Before the dispatcher: it reads the queued sends from the ledger.
    const ledger = new SendLedger();
    const ledgerFeed = new CheckpointedProjection(events, ledger, logger);
    await ledgerFeed.startFromCheckpoint(checkpoints, config.checkpointEveryMs ?? DEFAULT_CHECKPOINT_EVERY_MS);
    await ledgerFeed.catchUp(10_000);
    const dispatcher = new Dispatcher(events, sessions, registry, ledger, media, logger, {
      pacingMs: config.pacingMs,
      typing: config.typing,
      ttlMs: config.sendTtlMs,
      retryForMs: config.sendRetryForMs,
      retryMs: 1_000,
    });
    const owner = new OwnerRouter(nats, ownership, localOwnerOps(sessions, sandbox, new NumberCheckThrottle(config.numberChecks), refs, logger), logger);
    owner.start();
    const unheld = await UnheldSendsDecider.open(
      nats,
      { replicaId: config.replicaId, ttlMs: config.leaseTtlMs, renewEveryMs: config.leaseRenewMs, claimEveryMs: config.claimEveryMs },
      logger,
    );
    await unheld.start();
    dispatcher.decideFor((instanceId) => ownership.owns(instanceId) || (ownership.isFree(instanceId) && unheld.decides()));
    dispatcher.start();
    sessions.startClaiming(config.claimEveryMs);
    const messages = new MessagesService(
      events,
      registry,
      (url) => assertPublicUrl(url, { allowPrivate: config.allowPrivateNetworks, field: 'media_url', setting: MEDIA_PRIVATE_NETWORKS_SETTING }),
      {
        ledger,
        quotas: config.sendQuotas,
        folded: () => ledgerFeed.position,
      },
    );
    const downloads = new DownloadSlots(config.mediaDownloadsMax);
    const grpc = await startGrpcServer(
      loadSessionsProto().Sessions.service,
      sessionsHandlers(
        owner,
        messages,
        {
          reserve: () => downloads.take(),
          getMedia: (instanceId, messageId) => downloadInboundMedia(refs, connector, instanceId, messageId, config.mediaDownloadMaxBytes, logger),
        },
        config.qrWaitMs,
        logger,
      ),
      config.grpcAddress,
      logger,
    );
    // As the other services (it took a NATS that hangs for ready until its pings failed, 10 s). The registry, not the
    // send ledger: the ledger's pattern end is a lookup over every message's subject.
    startup.started(caughtUpReadiness(nats, registry, 'instance registry is catching up'));
    return { sandbox, grpc, dispatcher, unheld, owner, sessions, registry, ledgerFeed, media };
  });
  const { sandbox, grpc, dispatcher, unheld, owner, sessions, registry, ledgerFeed, media } = service;
  logger.info({ grpcPort: grpc.port, opsPort: ops.port, connector: config.connector }, 'sessions service started');
  let closed = false;
  return {
    grpcPort: grpc.port,
    opsPort: ops.port,
    sandbox,
    close: async () => {
      if (closed) return;
      closed = true;
      await grpc.close();
      await ops.close();
      await dispatcher.stop();
      // After the last sweep: another replica decides for the unheld instances from its next claim on.
      await unheld.stop();
      await owner.stop();
      await sessions.closeAll();
      await registry.stop();
      await ledgerFeed.stop();
      await media.close();
      await closeBase();
    },
  };
};
