import { Lanes, webhookWants, type Delivery as StoreDelivery, type EventStore, type Logger } from '@wagw/lib';
import { erasedByTime } from '../endpoints/contentErasure';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';
import type { WebhookEvent } from '../routing/webhookEvent';
import { webhookEventsOf } from '../routing/webhookEvent';
import type { Attempter } from './attempter';
import type { CircuitBreaker } from './circuitBreaker';
import { firstAttempt, recordErasedDrop, recordOffDrop, type FirstAttemptDeps, type Handoff } from './firstAttempt';
import { SlowInstances } from './slowInstances';

/** Events in one instance's lane at which the attempt ahead of them is handed off at once (see `handle`). */
const MAX_PER_INSTANCE = 1_000;
/** Beyond the time-out of a handed-off attempt: its outcome is recorded (one append) before the deliverer reads it. */
const HANDOFF_MARGIN_MS = 5_000;
/** Tries to read an instance's settings up to the event being routed, each within `confirmWithinMs` (default 5 s). */
const CONFIRM_TRIES = 6;

export interface RouterOptions {
  /** First attempts running at once over all instances. */
  concurrency: number;
  confirmWithinMs?: number;
  maxPerInstance?: number;
  /** The delivery client's time-out: a handed-off attempt has surely ended this long after it began (plus a margin). */
  attemptTimeoutMs: number;
  /** How long a lane waits for an attempt before handing it (and the instance's next events) to the deliverer. */
  slowAfterMs?: number;
}

/**
 * Makes the first attempt of each webhook event of an instance whose webhook is on, one event at a time per
 * instance (the sequencer hands each instance's events to one replica, in event order). The domain event stays
 * unacked until the outcome is durable (see firstAttempt). Events raised while the webhook is off are not
 * delivered then; a replay (GET /v1/replay_webhooks) can send them later.
 *
 * A lane waits for an attempt `slowAfterMs` at most (or less when events pile up behind it): then the delivery is
 * recorded as pending for the deliverer and the event acked, and the instance's next events are recorded so too
 * (`SlowInstances`), until those handed over have had their first attempt. So an instance whose endpoint hangs holds
 * its events in memory (unacked on the sequencer's bounded consumer) and a concurrency slot for seconds, not for a
 * time-out per event: any number of them cannot stop the other instances' first attempts.
 */
export class Router {
  private readonly lanes: Lanes;
  private readonly deps: FirstAttemptDeps;
  private readonly confirmWithinMs: number;
  private readonly maxPerInstance: number;
  private readonly slow: SlowInstances;
  /** Events in a lane (waiting or worked on), by stream and sequence, with the copies of them that came meanwhile. */
  private readonly inLane = new Map<string, StoreDelivery[]>();
  /** Per instance, the attempt its lane waits for: calling it hands that attempt off at once. */
  private readonly waitingOn = new Map<string, () => void>();
  /** Outcomes of handed-off attempts still to be recorded (a shutdown waits for them). */
  private readonly late = new Set<Promise<void>>();

  constructor(
    events: EventStore,
    deliveries: EventStore,
    private readonly endpoints: EndpointDirectory,
    attempter: Attempter,
    breaker: CircuitBreaker,
    private readonly logger: Logger,
    private readonly options: RouterOptions,
  ) {
    this.lanes = new Lanes(options.concurrency);
    this.confirmWithinMs = options.confirmWithinMs ?? 5_000;
    this.maxPerInstance = options.maxPerInstance ?? MAX_PER_INSTANCE;
    this.deps = { events, deliveries, attempter, breaker, erasure: endpoints, settings: endpoints };
    this.slow = new SlowInstances(deliveries, endpoints);
  }

  /**
   * Queues an event behind the instance's earlier ones. A copy of an event already in the lane (the sequencer
   * forwards one again when its answer is late) is answered with it, taking no place in the lane. When events pile
   * up to `maxPerInstance`, the attempt ahead of them is handed off now: the lane then records them quickly, in order.
   * Nothing is handed back to JetStream for a full lane (the instance's later events would have overtaken it).
   * `arrived`: the first of the instance's events this replica works on since the instance came to it (the sequencer
   * tells); then what it holds in memory of an earlier handover is checked against the instance's marker. Absent
   * (a caller that cannot tell) counts as arrived: one read more, never an event sent before a handed-over one.
   */
  handle(instanceId: string, delivery: StoreDelivery, arrived = true): void {
    const key = `${delivery.commit.stream}#${delivery.commit.sequence}`;
    const copies = this.inLane.get(key);
    if (copies) return void copies.push(delivery);
    if (this.lanes.size(instanceId) + 1 >= this.maxPerInstance) this.waitingOn.get(instanceId)?.();
    this.inLane.set(key, []);
    const settle = (answer: (d: StoreDelivery) => void): void => {
      const came = this.inLane.get(key) ?? [];
      this.inLane.delete(key);
      answer(delivery);
      came.forEach(answer);
    };
    const withCopies: StoreDelivery = {
      commit: delivery.commit,
      deliveryCount: delivery.deliveryCount,
      ack: () => settle((d) => d.ack()),
      nak: (delayMs?: number) => settle((d) => d.nak(delayMs)),
      inProgress: () => delivery.inProgress(),
    };
    this.lanes.push(instanceId, () => this.route(instanceId, withCopies, arrived));
  }

  /**
   * Whether the endpoint directory holds the instance's settings as of `sequence`, tried again in the lane while it
   * cannot tell yet (a replica that just started folds the log). Handing the event back at once let the instance's
   * next events, already queued behind it, go out first (seen in the compose drill: `message.read` before
   * `instance.connected`). Bounded: after CONFIRM_TRIES the event goes back to JetStream, and the lane moves on.
   */
  private async settingsReached(instanceId: string, sequence: number): Promise<boolean> {
    for (let tries = 0; tries < CONFIRM_TRIES; tries++) {
      if ((await this.endpoints.confirmed(instanceId, this.confirmWithinMs, sequence)) !== null) return true;
    }
    return false;
  }

  /** Resolves when every event handed over so far has been worked on, and the outcomes of handed-off attempts recorded. */
  async idle(): Promise<void> {
    await this.lanes.idle();
    while (this.late.size > 0) await Promise.all([...this.late]);
  }

  /**
   * Finishes the work held, then calls `stopTaking` in the very turn nothing is found being worked on, so no event is
   * taken between the last one finished and the end of taking (a replica leaving: see the webhooks service's close).
   */
  async finish(stopTaking: () => void): Promise<void> {
    do await this.idle();
    while (!this.isIdle);
    stopTaking();
  }

  /** Whether nothing is being worked on now: no event in a lane, no handed-off attempt whose outcome is unrecorded. */
  get isIdle(): boolean {
    return this.lanes.isIdle && this.late.size === 0;
  }

  private async route(instanceId: string, delivery: StoreDelivery, arrived: boolean): Promise<void> {
    // In the lane, so in event order: its earlier events were worked on elsewhere (or before a restart).
    if (arrived) this.slow.arrived(instanceId);
    try {
      const webhooks = webhookEventsOf(delivery.commit);
      if (webhooks.length === 0) return delivery.ack();
      // An enabled endpoint is used as the read model has it (no lookup per event: the hot path). Otherwise the
      // model is first brought up to this event, so a webhook switched on just before it is not missed.
      if (!(await this.settingsReached(instanceId, delivery.commit.sequence))) return delivery.nak(1_000);
      for (const [index, webhook] of webhooks.entries()) {
        const endpoint = this.endpoints.get(instanceId);
        if (!endpoint?.enabled || !endpoint.url) {
          // Raised while the webhook was on, its turn came after it went off: recorded dropped (the user replays it).
          if (endpoint && this.endpoints.webhookOnAt(instanceId, delivery.commit.sequence)) {
            const left = webhooks.slice(index).filter((w) => webhookWants(endpoint.events, w.type));
            await this.dropOff(instanceId, left, delivery);
          }
          break;
        }
        // Types outside the webhook's event filter are not delivered (nor recorded): they stay in the history.
        if (!webhookWants(endpoint.events, webhook.type)) continue;
        // Its content was erased since the event, though this copy was opened before (it waited in the lane): it is
        // recorded dropped, not sent (nor handed to the deliverer with its payload). Known from the model, no read.
        if (erasedByTime(endpoint.dataErasedAt, webhook.type, webhook.timestamp)) {
          await recordErasedDrop(this.deps.deliveries, instanceId, webhook, { deliveryId: webhook.id, redelivered: delivery.deliveryCount > 1 });
          continue;
        }
        const heartbeat = setInterval(() => delivery.inProgress(), 10_000);
        try {
          await this.deliver(instanceId, webhook, endpoint.url, delivery.deliveryCount > 1);
        } finally {
          clearInterval(heartbeat);
        }
      }
      delivery.ack();
    } catch (error) {
      this.logger.warn({ err: error, sequence: delivery.commit.sequence }, 'routing a webhook failed; will retry');
      delivery.nak(2_000);
    }
  }

  /** Webhooks recorded dropped (`webhook disabled`), never sent, as the deliverer drops a retry whose turn comes late. */
  private async dropOff(instanceId: string, webhooks: WebhookEvent[], delivery: StoreDelivery): Promise<void> {
    const redelivered = delivery.deliveryCount > 1;
    for (const webhook of webhooks) await recordOffDrop(this.deps, instanceId, webhook, { deliveryId: webhook.id, redelivered });
  }

  /** The first attempt of one webhook, or its record for the deliverer while the instance's endpoint is slow. */
  private async deliver(instanceId: string, webhook: WebhookEvent, url: string, redelivered: boolean): Promise<void> {
    const target = { deliveryId: webhook.id, redelivered };
    if (await this.slow.pass(instanceId, webhook, target)) return;
    const handoff = this.handoff(instanceId);
    try {
      const result = await firstAttempt(this.deps, instanceId, webhook, url, target, handoff.handoff);
      if (result.kind === 'done') return;
      const late = result.late
        .catch((error: unknown) =>
          this.logger.warn({ err: error, instanceId, deliveryId: webhook.id }, 'recording a handed-off attempt failed; the deliverer makes it again'),
        )
        .finally(() => this.late.delete(late));
      this.late.add(late);
      // Stored before the event is acked (so before the instance can move): its next owner reads it there.
      await this.slow.handedOff(instanceId, handoff.handoff.until, result.stream, result.version);
    } finally {
      handoff.clear();
    }
  }

  /** A handoff due after `slowAfterMs`, or at once when `waitingOn` is called for the instance (events pile up). */
  private handoff(instanceId: string): { handoff: Handoff; clear: () => void } {
    let release = (): void => undefined;
    // From the hand-off, not from the attempt's start: reading the record and the signing secret come before the
    // request, so a request may begin late (NATS slow); it ends a time-out after it began at the latest.
    let until = new Date(Date.now() + this.options.attemptTimeoutMs + HANDOFF_MARGIN_MS);
    const due = new Promise<void>((resolve) => {
      release = () => {
        until = new Date(Date.now() + this.options.attemptTimeoutMs + HANDOFF_MARGIN_MS);
        resolve();
      };
    });
    const timer = setTimeout(release, this.options.slowAfterMs ?? 5_000);
    this.waitingOn.set(instanceId, release);
    if (this.lanes.size(instanceId) >= this.maxPerInstance) release();
    return {
      handoff: {
        due,
        get until() {
          return until;
        },
      },
      clear: () => {
        clearTimeout(timer);
        if (this.waitingOn.get(instanceId) === release) this.waitingOn.delete(instanceId);
      },
    };
  }
}
