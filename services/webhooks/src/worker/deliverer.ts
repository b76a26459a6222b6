import {
  AggregateCache,
  DURABLES,
  instanceIdOf,
  Lanes,
  loadAggregate,
  type Decider,
  type Delivery as StoreDelivery,
  type EventStore,
  type Logger,
  type Subscription,
} from '@wagw/lib';
import { decideDrop, WEBHOOK_OFF } from '../delivery/decisions';
import { ALL_DELIVERY_JOBS_PATTERN, deliveryDue, deliveryOfJob, dueStream, type DeliveryDue, type DeliveryEvent } from '../delivery/events';
import { evolveDelivery, initialDeliveryState, nextAttemptDue, upcastDelivery, type Delivery, type DeliveryState } from '../delivery/state';
import { erasedDelivery } from '../endpoints/contentErasure';
import { disableWebhook } from '../endpoints/disableWebhook';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';
import type { Attempter } from './attempter';
import { heartbeatMs } from './heartbeat';
import { deferralMs, type CircuitBreaker } from './circuitBreaker';

/** The events that make a delivery job; the store acks the others (attempts, outcomes) for this consumer. */
const TRIGGERS = ['DeliveryScheduled', 'RedeliveryRequested', 'DeliveryDue'];
/**
 * Jobs unacked at once (`maxAckPending`). A job put back with a delay (`nak`) counts until it comes back, so only
 * short waits are put back (`holdUpToMs`); longer ones are scheduled (`later`). Before that, a thousand retries of
 * one dead endpoint, each held for its 5 minutes to 10 hours, stopped every instance's retries at JetStream's usual
 * bound of 1,000 (found by a bug hunt on a real nats-server). The bound stays high for bursts of short waits.
 */
const MAX_WAITING_JOBS = 100_000;
/** Waits up to this long are put back with JetStream (`nak`): the retry schedule's first step (5 s), network errors. */
const HOLD_UP_TO_MS = 10_000;
const MAX_PER_INSTANCE = 1_000;

/** The delivery aggregate for the shared loading helpers (its decisions live in `delivery/decisions`). */
export const deliveryDecider: Decider<never, DeliveryEvent, DeliveryState> = {
  decide: () => [],
  evolve: evolveDelivery,
  initialState: initialDeliveryState,
  upcast: upcastDelivery,
};

export interface DelivererOptions {
  random: () => number;
  /** Attempts running at once over all endpoints; each instance has at most one (its deliveries stay in order). */
  concurrency: number;
  /** Jobs pulled at a time. */
  batch: number;
  /** Redelivery time of a job held by a crashed replica; must exceed the HTTP time-out. */
  ackWaitMs: number;
  now: () => Date;
  /** Waits up to this long are put back with JetStream, longer ones scheduled (default `HOLD_UP_TO_MS`). */
  holdUpToMs?: number;
}

/**
 * Works the deliveries that did not succeed at their first attempt (and redelivery requests): one lane per
 * instance, a circuit breaker per instance, every attempt recorded on the delivery's stream. A retry waits as a
 * scheduled due marker (`EventStore.schedule`) when its wait is long, so waiting jobs are not held unacked.
 */
export class Deliverer {
  private subscription: Subscription | null = null;
  private running: Promise<void> = Promise.resolve();
  private readonly lanes: Lanes;
  private readonly held = new Set<StoreDelivery>();
  private readonly cache = new AggregateCache<DeliveryState>(50_000);
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly deliveries: EventStore,
    private readonly events: EventStore,
    private readonly endpoints: EndpointDirectory,
    private readonly attempter: Attempter,
    private readonly breaker: CircuitBreaker,
    private readonly logger: Logger,
    private readonly options: DelivererOptions,
  ) {
    this.lanes = new Lanes(options.concurrency);
    // An erasure: the instance's deliveries are read again, their payloads as the store has them now (erased).
    endpoints.onChange(({ instanceId, before, after }) => {
      if (after.dataErasedAt !== (before.exists ? before.dataErasedAt : null)) this.cache.deleteUnder(instanceId);
    });
  }

  async start(): Promise<void> {
    this.subscription = await this.deliveries.subscribe(ALL_DELIVERY_JOBS_PATTERN, {
      durableName: DURABLES.webhooksDeliverer,
      ackWaitMs: this.options.ackWaitMs,
      batch: this.options.batch,
      maxAckPending: MAX_WAITING_JOBS,
      types: TRIGGERS,
    });
    this.heartbeat = setInterval(() => this.held.forEach((d) => d.inProgress()), heartbeatMs(this.options.ackWaitMs));
    this.heartbeat.unref();
    this.running = this.run(this.subscription);
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    // Jobs fetched before the close still reach the lanes, and are worked on before the lanes go idle.
    await this.running;
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.lanes.idle();
  }

  private async run(subscription: Subscription): Promise<void> {
    try {
      for await (const job of subscription) {
        const instanceId = instanceIdOf(job.commit.stream);
        if (this.lanes.size(instanceId) >= MAX_PER_INSTANCE) {
          job.nak(1_000);
          continue;
        }
        this.held.add(job);
        this.lanes.push(instanceId, () => this.process(instanceId, job).finally(() => this.held.delete(job)));
      }
    } catch (error) {
      this.logger.error({ err: error }, 'deliverer subscription ended');
    }
  }

  private async load(job: StoreDelivery, stream: string): Promise<{ state: DeliveryState; version: number }> {
    const first = job.commit.events[0];
    // A record handed over by a lane (`not_before`) gets its running attempt's outcome appended later: read it.
    const handedOver = first?.type === 'DeliveryScheduled' && Boolean((first.data as { not_before?: string }).not_before);
    if (job.commit.stream === stream && job.deliveryCount === 1 && first?.type === 'DeliveryScheduled' && !handedOver && !this.cache.get(stream)) {
      // A fresh job needs no read: its commit is the whole stream so far.
      const state = job.commit.events.map(upcastDelivery).reduce(evolveDelivery, initialDeliveryState());
      return { state, version: job.commit.sequence };
    }
    return loadAggregate(this.deliveries, deliveryDecider, stream, this.cache);
  }

  private async process(instanceId: string, job: StoreDelivery): Promise<void> {
    try {
      const stream = deliveryOfJob(job.commit.stream);
      const { state, version } = await this.load(job, stream);
      const trigger = job.commit.events.find((e) => TRIGGERS.includes(e.type));
      const due = trigger?.type === 'DeliveryDue' ? (trigger.data as DeliveryDue['data']) : null;
      const jobRound = trigger?.type === 'RedeliveryRequested' ? Number(trigger.data.round) : (due?.round ?? 0);
      // Done already, or superseded by a later redelivery request (that one carries the job now).
      if (!state.exists || state.status !== 'pending' || jobRound < state.round) return job.ack();
      // A marker for an attempt made meanwhile is worked like any job of a pending delivery: it schedules the next step
      // again (a repeat replaces the pending one), so a schedule that failed after its attempt is not lost.
      const now = this.options.now();
      const wait = nextAttemptDue(state) - now.getTime();
      if (wait > 5) return await this.later(job, stream, state, version, wait, 0);
      // A drop is for good: only the end of the instance's stream may say its webhook is off.
      const endpoint = await this.endpoints.confirmed(instanceId, 5_000);
      if (endpoint === null) return job.nak(1_000);
      // Erased by time, not only when the payload no longer opens: this copy may have been opened before the erasure
      // (a fresh job, the cache), or recorded after it under the instance's new key (contentErasure).
      const body = state.body === null || erasedDelivery(endpoint?.dataErasedAt ?? null, state) ? null : state.body;
      if (!endpoint?.enabled || !endpoint.url || body === null) {
        // The webhook is off, or the payload was erased (its instance's data key destroyed): nothing to send.
        const reason = !endpoint?.enabled || !endpoint.url ? WEBHOOK_OFF : 'content_erased';
        await this.append(stream, state, version, decideDrop(reason, now.toISOString()), `drop-${state.deliveryId}-${state.round}`);
        return job.ack();
      }
      const open = this.breaker.waitMs(instanceId);
      if (open > 0) {
        const deferrals = (due?.deferrals ?? 0) + 1;
        return await this.later(job, stream, state, version, deferralMs(open, deferrals, this.options.random), deferrals);
      }
      const attempt = state.attempts.length + 1;
      const { events, next, at } = await this.attempter.attempt(instanceId, { ...state, body }, endpoint.url);
      const { state: after, version: afterVersion } = await this.append(stream, state, version, events, `attempt-${state.deliveryId}-${attempt}`);
      switch (next.kind) {
        case 'done':
          return job.ack();
        case 'retry':
          return after.exists ? await this.later(job, stream, after, afterVersion, next.delayMs, 0) : job.ack();
        case 'disable_webhook':
          await disableWebhook(this.events, instanceId, endpoint.url, next.reason, at, `gone-${state.deliveryId}-${attempt}`);
          return job.ack();
      }
    } catch (error) {
      this.logger.warn({ err: error, stream: job.commit.stream }, 'delivery step failed; will retry');
      job.nak(2_000);
    }
  }

  /**
   * Puts the delivery's next step off by `delayMs`. A short wait stays with JetStream (the job is put back); a longer
   * one becomes a due marker the store appends when its time comes, and the job is acked, so retries waiting for
   * hours hold nothing. A repeat (this job redelivered after a crash) replaces the pending marker.
   */
  private async later(job: StoreDelivery, stream: string, state: Delivery, version: number, delayMs: number, deferrals: number): Promise<void> {
    // A nats-server before 2.12 keeps no schedules: the job is put back, held as unacked as before.
    if (delayMs <= (this.options.holdUpToMs ?? HOLD_UP_TO_MS) || !this.deliveries.schedules) return job.nak(delayMs);
    const now = this.options.now();
    const marker = deliveryDue(now.toISOString(), { round: state.round, attempt: state.attempts.length + 1, deferrals });
    // Made from the record at `version`: refused (and the job worked again) if another job moved it on meanwhile.
    await this.deliveries.schedule(dueStream(stream), [marker], new Date(now.getTime() + delayMs), { stream, version });
    job.ack();
  }

  /** Records `events` on the delivery's stream; returns its state after them. */
  private async append(
    stream: string,
    state: DeliveryState,
    version: number,
    events: DeliveryEvent[],
    commandId: string,
  ): Promise<{ state: DeliveryState; version: number }> {
    const result = await this.deliveries.append(stream, events, { expectedVersion: version, commandId });
    const folded = events.reduce(evolveDelivery, state);
    // An attempt that ran while the instance was erased does not put its opened payload back into the cache.
    const erased = folded.exists && erasedDelivery(this.endpoints.get(folded.instanceId)?.dataErasedAt ?? null, folded);
    const after = erased ? { ...folded, body: null } : folded;
    this.cache.set(stream, { state: after, version: result.version });
    return { state: after, version: result.version };
  }
}
