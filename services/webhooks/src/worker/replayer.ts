import { heartbeatMs } from './heartbeat';
import {
  DURABLES,
  instanceHistoryPattern,
  instanceIdOf,
  type Delivery as StoreDelivery,
  type EventStore,
  type Logger,
  type Subscription,
  webhookWants,
} from '@wagw/lib';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';
import { decideFinish, decideProgress, decideStop } from '../replay/decisions';
import { ALL_REPLAYS_PATTERN, replayDeliveryId, type ReplayEvent } from '../replay/events';
import { evolveReplay, initialReplayState, upcastReplay, type ReplayState } from '../replay/state';
import { webhookEventsOf } from '../routing/webhookEvent';
import { firstAttempt, type FirstAttemptDeps } from './firstAttempt';
import { Pacer } from './pacer';
import { ReplayDrops } from './replayDrops';

/** How often a running replay records how far it got (the point it resumes from after a crash). */
const PROGRESS_EVERY_MS = 1_000;

export interface ReplayerOptions {
  /** Replayed deliveries a second at most, per replica. */
  ratePerSecond: number;
  ackWaitMs: number;
}

type Running = Extract<ReplayState, { exists: true }>;

/**
 * Works the replays asked for (GET /v1/replay_webhooks), one at a time per replica: reads the instance's past events
 * from the log, and makes each matching one's first attempt to the current webhook as a delivery of its own (the
 * original's webhook-id, signed anew), through the same path as live events (firstAttempt: retries and dead
 * letters follow on the deliverer). Paced (`ratePerSecond`) so live deliveries, which the router and the deliverer
 * make apart from this, keep their pace. Progress is recorded as it goes, so a replay taken over after a crash
 * resumes there. A webhook switched off meanwhile stops it: its remaining events are recorded as dropped deliveries
 * (README: a delivery whose turn comes after the switch-off), so the listing shows what a new replay has to send.
 */
export class Replayer {
  private subscription: Subscription | null = null;
  private running: Promise<void> = Promise.resolve();
  /** The first-attempt path, with the endpoint directory as what it knows of erasures (the settings the replay reads). */
  private readonly attempts: FirstAttemptDeps;

  constructor(
    private readonly events: EventStore,
    private readonly deliveries: EventStore,
    private readonly endpoints: EndpointDirectory,
    attempts: Omit<FirstAttemptDeps, 'erasure' | 'settings'>,
    private readonly logger: Logger,
    private readonly options: ReplayerOptions,
  ) {
    this.attempts = { ...attempts, erasure: endpoints, settings: endpoints };
  }

  async start(): Promise<void> {
    this.subscription = await this.deliveries.subscribe(ALL_REPLAYS_PATTERN, {
      durableName: DURABLES.webhooksReplayer,
      ackWaitMs: this.options.ackWaitMs,
      batch: 1,
      // Its progress records (ReplayProgressed, ...) are acked by the store.
      types: ['ReplayRequested'],
    });
    this.running = this.run(this.subscription);
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.running;
  }

  private async run(subscription: Subscription): Promise<void> {
    try {
      for await (const job of subscription) {
        await this.work(job);
      }
    } catch (error) {
      this.logger.error({ err: error }, 'replayer subscription ended');
    }
  }

  private async work(job: StoreDelivery): Promise<void> {
    const heartbeat = setInterval(() => job.inProgress(), heartbeatMs(this.options.ackWaitMs));
    try {
      const stream = job.commit.stream;
      const commits = await this.deliveries.readStream(stream);
      const state = commits.flatMap((c) => c.events.map(upcastReplay)).reduce(evolveReplay, initialReplayState());
      if (state.exists && !state.finished) await this.replay(stream, state, commits.at(-1)?.sequence ?? 0, job.deliveryCount > 1);
      job.ack();
    } catch (error) {
      this.logger.warn({ err: error, stream: job.commit.stream }, 'replay step failed; will resume');
      job.nak(2_000);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async replay(stream: string, initial: Running, startVersion: number, resumed: boolean): Promise<void> {
    const { replay_id: replayId, since, until, types } = initial.request;
    const instanceId = instanceIdOf(stream);
    const pacer = new Pacer(this.options.ratePerSecond);
    let state: ReplayState = initial;
    let version = startVersion;
    let { nextSequence, replayed } = initial;
    const drops = new ReplayDrops(this.attempts, instanceId, initial.dropped);
    let savedAt = performance.now();
    const record = async (events: ReplayEvent[]): Promise<void> => {
      if (events.length === 0) return;
      version = (await this.deliveries.append(stream, events, { expectedVersion: version, commandId: `${replayId}-${version}` })).version;
      state = events.reduce(evolveReplay, state);
    };
    /** Once stopped: the event filter its drops follow (types it leaves out would not have been sent, nor listed). */
    let dropFilter: readonly string[] | null = initial.stopped === null ? null : (this.endpoints.get(instanceId)?.events ?? []);
    // Where an earlier run of this replay stopped (a crash), the events may have been replayed already.
    const redelivered = resumed || nextSequence > 1;
    for await (const commit of this.events.scanPattern(instanceHistoryPattern(instanceId), nextSequence)) {
      if (until !== null && commit.events.some((e) => Date.parse(e.occurredAt) > until)) break;
      for (const webhook of webhookEventsOf(commit)) {
        if (Date.parse(webhook.timestamp) < since || (types.length > 0 && !types.includes(webhook.type))) continue;
        const target = { deliveryId: replayDeliveryId(replayId, webhook.id), replayOf: webhook.id, redelivered };
        if (dropFilter === null) {
          // Only the end of the instance's stream may stop the replay; until it is read, the replay resumes later (nak'd).
          const endpoint = await this.endpoints.confirmed(instanceId, 5_000);
          if (endpoint === null) throw new Error('the webhook settings could not be read in time');
          if (endpoint?.enabled && endpoint.url) {
            // As live: types outside the webhook's event filter were never delivered, and are not now.
            if (!webhookWants(endpoint.events, webhook.type)) continue;
            await pacer.wait();
            await firstAttempt(this.attempts, instanceId, webhook, endpoint.url, target);
            replayed++;
            continue;
          }
          // Switched off (a 410, a disable): this event and every later one are recorded as dropped, not left out.
          await record(decideStop(state, new Date().toISOString()));
          dropFilter = endpoint?.events ?? [];
        }
        if (webhookWants(dropFilter, webhook.type)) await drops.add(webhook, target);
      }
      nextSequence = commit.sequence + 1;
      if (performance.now() - savedAt >= PROGRESS_EVERY_MS) {
        // Past these commits only once their drops are recorded: a resumed replay records what is missing.
        await drops.settle();
        await record(decideProgress(state, { nextSequence, replayed, dropped: drops.count }, new Date().toISOString()));
        savedAt = performance.now();
      }
    }
    await drops.settle();
    await record(decideFinish(state, { replayed, dropped: drops.count }, new Date().toISOString()));
  }
}
