import { randomBytes } from 'node:crypto';
import {
  caughtUpReadiness,
  BUCKETS,
  createDeliveryClient,
  createLogger,
  DEFAULT_RETRY_SCHEDULE,
  DURABLES,
  gaugeFrom,
  JetStreamEventStore,
  KvWebhookSecretStore,
  LeaseStore,
  loadWebhooksProto,
  Ownership,
  parseSchedule,
  startGrpcServer,
  STREAMS,
  type Logger,
  CheckpointStore,
  DEFAULT_CHECKPOINT_EVERY_MS,
  SealedEventStore,
  startServiceBase,
  type RunningService,
} from '@wagw/lib';
import { DeliveriesService } from './application/deliveriesService';
import type { WebhooksConfig } from './config';
import { EndpointDirectory } from './endpoints/endpointDirectory';
import { webhooksHandlers } from './grpc/webhooksServer';
import { LiveEvents } from './live/liveEvents';
import { Attempter } from './worker/attempter';
import { CircuitBreaker } from './worker/circuitBreaker';
import { Deliverer } from './worker/deliverer';
import { Replayer } from './worker/replayer';
import { Router } from './worker/router';
import { Membership } from './cluster/membership';
import { Sequencer } from './cluster/sequencer';
import { serveWork, WorkSender } from './cluster/workChannel';

/** A member id for NATS subjects: the worker id's safe characters plus an incarnation (a restart is a new member). */
const memberIdOf = (workerId: string): string => `${workerId.replace(/[^A-Za-z0-9_-]/g, '_')}-${randomBytes(4).toString('hex')}`;

export type RunningWebhooksService = RunningService;

/** Starts the webhooks service: router and deliverer (competing consumers), delivery records, gRPC and ops. */
export const startWebhooksService = async (config: WebhooksConfig, logger: Logger = createLogger('webhooks')): Promise<RunningWebhooksService> => {
  const schedule = config.retrySchedule ? parseSchedule(config.retrySchedule) : DEFAULT_RETRY_SCHEDULE;
  const base = 'the event store, buckets and consumers';
  const { ops, service, closeBase } = await startServiceBase('webhooks', config, logger, base, async ({ startup, nats, keys, events }) => {
    // Both logs hold content (events; deliveries' payloads): sealed with the instances' data keys.
    const deliveries = new SealedEventStore(
      await JetStreamEventStore.open(nats, {
        streamName: STREAMS.webhooks.name,
        subjectPrefix: STREAMS.webhooks.subjectPrefix,
        logger,
        // Due markers (deliverer.ts `later`) are consumed at once; kept a week, for a webhooks service down that long.
        scheduledCommitTtlMs: 7 * 24 * 60 * 60_000,
      }),
      keys,
    );
    const secrets = await KvWebhookSecretStore.open(nats);
    const endpoints = new EndpointDirectory(events, logger);
    await endpoints.startFromCheckpoint(await CheckpointStore.open(nats), config.checkpointEveryMs ?? DEFAULT_CHECKPOINT_EVERY_MS);
    const client = createDeliveryClient({ timeoutMs: config.timeoutMs, allowPrivateNetworks: config.allowPrivateNetworks });
    const breaker = new CircuitBreaker(config.circuitThreshold, config.circuitCoolDownMs);
    const now = (): Date => new Date();
    const attempter = new Attempter(secrets, client, breaker, { schedule, random: Math.random }, config.workerId, now);
    const ackWaitMs = Math.max(config.ackWaitMs, config.timeoutMs + 5_000);
    const router = new Router(events, deliveries, endpoints, attempter, breaker, logger, {
      concurrency: config.concurrency,
      attemptTimeoutMs: config.timeoutMs,
      slowAfterMs: config.slowAfterMs,
    });
    const membership = new Membership(nats.nc, memberIdOf(config.workerId), { heartbeatMs: config.heartbeatMs }, logger);
    const sender = new WorkSender(nats.nc, ackWaitMs);
    nats.onDisconnect(() => sender.abandonAll());
    const work = serveWork(nats.nc, membership.self, (delivery, arrived) => router.handle(delivery.commit.stream.split('.')[0]!, delivery, arrived));
    const lease = new Ownership(
      await LeaseStore.open(nats, BUCKETS.webhooksLeases),
      { replicaId: membership.self, ttlMs: config.leaderTtlMs, renewEveryMs: Math.max(100, Math.floor(config.leaderTtlMs / 4)) },
      logger,
    );
    const sequencer = new Sequencer(
      events,
      lease,
      membership,
      sender,
      (instanceId, delivery, arrived) => router.handle(instanceId, delivery, arrived),
      logger,
      {
        ackWaitMs,
        batch: config.batch,
        claimEveryMs: Math.max(100, Math.min(1_000, Math.floor(config.leaderTtlMs / 4))),
        drainTimeoutMs: config.timeoutMs + 5_000,
      },
    );
    const deliverer = new Deliverer(deliveries, events, endpoints, attempter, breaker, logger, {
      random: Math.random,
      concurrency: config.concurrency,
      batch: config.batch,
      ackWaitMs,
      now,
    });
    const replayer = new Replayer(events, deliveries, endpoints, { events, deliveries, attempter, breaker }, logger, {
      ratePerSecond: config.replayRate,
      ackWaitMs,
    });
    membership.start();
    await sequencer.start();
    await deliverer.start();
    await replayer.start();

    const unregisterGauges = [
      gaugeFrom('webhook_backlog', 'Deliveries waiting for an attempt or a retry (all replicas)', async () => {
        const info = await nats.jsm.consumers.info(STREAMS.webhooks.name, DURABLES.webhooksDeliverer).catch(() => null);
        return info ? info.num_pending + info.num_ack_pending : 0;
      }),
      gaugeFrom('webhook_open_circuits', 'Endpoints whose circuit breaker is open', () => breaker.openCount()),
      gaugeFrom('webhook_replicas', 'Webhooks replicas alive, as this one sees them', () => membership.aliveCount()),
    ];

    const live = new LiveEvents(events, endpoints);
    const grpc = await startGrpcServer(
      loadWebhooksProto().Webhooks.service,
      webhooksHandlers(new DeliveriesService(deliveries, endpoints), live, logger),
      config.grpcAddress,
      logger,
    );
    startup.started(caughtUpReadiness(nats, endpoints, 'endpoint settings are catching up'));
    return { nats, grpc, live, membership, sequencer, router, sender, work, deliverer, replayer, endpoints, client, unregisterGauges };
  });
  const { nats, grpc, live, membership, sequencer, router, sender, work, deliverer, replayer, endpoints, client, unregisterGauges } = service;
  logger.info({ grpcPort: grpc.port, opsPort: ops.port }, 'webhooks service started');
  let closed = false;
  return {
    grpcPort: grpc.port,
    opsPort: ops.port,
    close: async () => {
      if (closed) return;
      closed = true;
      // Live readers end first (their streams would hold the gRPC server open); they resume elsewhere.
      await live.closeAll();
      await grpc.close();
      await ops.close();
      // Hand the sequencer role over, then finish the work this replica holds, taking no new instances meanwhile.
      membership.drain();
      await sequencer.stop();
      // Forwarded events stop being taken in the very turn the lanes are found empty. Taken a turn later (after the
      // flush below), one was POSTed here while this replica said it left, and its leader handed it to another
      // replica too: a POST twice, the second after the instance's next event (seen with a replica stopped under
      // load). Forwarded from now on, an event finds no one here ("no responders"): its leader takes this replica
      // for gone and hands the event on, with nothing of it in flight here.
      await router.finish(() => work.unsubscribe());
      sequencer.close();
      // The last answers to forwarded events leave (they are batched per turn) before this replica says it left.
      await new Promise((resolve) => setImmediate(resolve));
      await nats.nc.flush().catch(() => undefined);
      membership.stop();
      sender.close();
      await replayer.stop();
      await deliverer.stop();
      await endpoints.stop();
      await client.close();
      await closeBase();
      unregisterGauges.forEach((unregister) => unregister());
    },
  };
};
