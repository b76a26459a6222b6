import { Lanes, webhookWants, type Delivery as StoreDelivery, type EventStore, type Logger } from '@wagw/lib';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';
import { webhookEventsOf } from '../routing/webhookEvent';
import type { Attempter } from './attempter';
import type { CircuitBreaker } from './circuitBreaker';
import { firstAttempt, type FirstAttemptDeps } from './firstAttempt';

const MAX_PER_INSTANCE = 1_000;
/** Tries to read an instance's settings up to the event being routed, each within `confirmWithinMs` (default 5 s). */
const CONFIRM_TRIES = 6;

/**
 * Makes the first attempt of each webhook event of an instance whose webhook is on, one event at a time per
 * instance (the sequencer hands each instance's events to one replica, in event order). The domain event stays
 * unacked until the outcome is durable (see firstAttempt). Events raised while the webhook is off are not
 * delivered then; a replay (GET /v1/replay_webhooks) can send them later.
 */
export class Router {
  private readonly lanes: Lanes;
  private readonly deps: FirstAttemptDeps;
  private readonly confirmWithinMs: number;
  /** Events in a lane (waiting or worked on), by stream and sequence, with the copies of them that came meanwhile. */
  private readonly inLane = new Map<string, StoreDelivery[]>();

  constructor(
    events: EventStore,
    deliveries: EventStore,
    private readonly endpoints: EndpointDirectory,
    attempter: Attempter,
    breaker: CircuitBreaker,
    private readonly logger: Logger,
    options: { concurrency: number; confirmWithinMs?: number },
  ) {
    this.lanes = new Lanes(options.concurrency);
    this.confirmWithinMs = options.confirmWithinMs ?? 5_000;
    this.deps = { events, deliveries, attempter, breaker };
  }

  /**
   * Queues an event behind the instance's earlier ones (handed back when too many wait already). A copy of an event
   * already in the lane (the sequencer forwards one again when its answer is late: a slow endpoint ahead of it) is
   * answered with it, taking no place in the lane, so late answers do not pile up copies there.
   */
  handle(instanceId: string, delivery: StoreDelivery): void {
    const key = `${delivery.commit.stream}#${delivery.commit.sequence}`;
    const copies = this.inLane.get(key);
    if (copies) return void copies.push(delivery);
    if (this.lanes.size(instanceId) >= MAX_PER_INSTANCE) return delivery.nak(1_000);
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
    this.lanes.push(instanceId, () => this.route(instanceId, withCopies));
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

  /** Resolves when every event handed over so far has been worked on. */
  idle(): Promise<void> {
    return this.lanes.idle();
  }

  private async route(instanceId: string, delivery: StoreDelivery): Promise<void> {
    try {
      const webhooks = webhookEventsOf(delivery.commit);
      if (webhooks.length === 0) return delivery.ack();
      // An enabled endpoint is used as the read model has it (no lookup per event: the hot path). Otherwise the
      // model is first brought up to this event, so a webhook switched on just before it is not missed.
      if (!(await this.settingsReached(instanceId, delivery.commit.sequence))) return delivery.nak(1_000);
      for (const webhook of webhooks) {
        const endpoint = this.endpoints.get(instanceId);
        if (!endpoint?.enabled || !endpoint.url) break;
        // Types outside the webhook's event filter are not delivered (nor recorded): they stay in the history.
        if (!webhookWants(endpoint.events, webhook.type)) continue;
        const heartbeat = setInterval(() => delivery.inProgress(), 10_000);
        try {
          await firstAttempt(this.deps, instanceId, webhook, endpoint.url, { deliveryId: webhook.id, redelivered: delivery.deliveryCount > 1 });
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
}
